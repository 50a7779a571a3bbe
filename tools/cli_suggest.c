/* cli_suggest.c - helping people who mistype: "did you mean", names matched
 * case-insensitively where unambiguous, and the option list of a subcommand
 * read from its own --help text (so a new option needs no second list). */
#include "cli_suggest.h"

#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Optimal-string-alignment Damerau-Levenshtein distance, ignoring case:
 * insertions, deletions, substitutions and swaps of two adjacent letters
 * ("verfy" -> "verify" is 1, "tee" -> "te" is 1, "rcile" -> "rceil" is 1). */
size_t cli_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64) return (size_t)-1; /* names are short; anything longer is not a typo of one */
    size_t d[65][65];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

/* "colwise" for "columnwise", "--col" for "--columnwise": s keeps the first
 * letter of name and the rest of its letters in order (ignoring case and
 * leading dashes), with at least 3 letters. */
static bool is_abbreviation(const char *s, const char *name)
{
    while (*s == '-' && *name == '-') s++, name++;
    if (strlen(s) < 3 || tolower((unsigned char)*s) != tolower((unsigned char)*name)) return false;
    for (; *name && *s; name++)
        if (tolower((unsigned char)*s) == tolower((unsigned char)*name)) s++;
    return *s == '\0';
}

const char *cli_closest(const char *s, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = 3; /* at most 2 edits */
    size_t len = strlen(s);
    for (size_t i = 0; i < n; i++) {
        /* an abbreviation counts as one edit, however many letters it drops */
        size_t d = is_abbreviation(s, names[i]) ? 1 : cli_edit_distance(s, names[i]);
        /* two edits turn any 2-letter word into any other: demand that the
         * typo keeps more letters than it changes */
        if (d < best_d && d < len && d < strlen(names[i])) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

const char *cli_match_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return names[i];
    const char *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0) {
            if (found) return NULL; /* two names differ only in case: no guess */
            found = names[i];
        }
    return found;
}

void cli_print_suggestion(FILE *f, const char *what, const char *s, const char *const *names, size_t n)
{
    const char *c = cli_closest(s, names, n);
    if (c) fprintf(f, "nvfp4: did you mean %s '%s'?\n", what, c);
}

char *cli_help_text(const nvfp4_cli_command *cmd)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return NULL;
    /* Every subcommand prints its --help on stdout; glibc's stdout is an
     * ordinary variable, so pointing it at a memory stream for the call
     * captures the text without a child process. */
    fflush(stdout);
    FILE *saved = stdout;
    stdout = mem;
    char name[64], help[] = "--help";
    snprintf(name, sizeof name, "%s", cmd->name);
    char *argv[] = {name, help, NULL};
    optind = 0; /* a getopt_long parse of the failed call may have run: start afresh */
    int rc = cmd->run(2, argv);
    fflush(mem);
    stdout = saved;
    fclose(mem);
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

size_t cli_help_options(const char *help, char ***out)
{
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    if (!v) return 0;
    for (const char *p = help; p && (p = strstr(p, "--")) != NULL;) {
        const char *q = p + 2;
        if (p > help && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) {
            p = q;
            continue;
        }
        while (isalnum((unsigned char)*q) || *q == '-') q++;
        size_t len = (size_t)(q - p);
        if (len > 2 && len < 64 && isalpha((unsigned char)p[2])) {
            bool dup = false;
            for (size_t i = 0; i < n && !dup; i++) dup = strlen(v[i]) == len && strncmp(v[i], p, len) == 0;
            if (!dup) {
                if (n == cap) {
                    char **w = realloc(v, 2 * cap * sizeof *v);
                    if (!w) break;
                    v = w;
                    cap *= 2;
                }
                v[n] = strndup(p, len);
                if (v[n]) n++;
            }
        }
        p = q;
    }
    *out = v;
    return n;
}

void cli_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}
