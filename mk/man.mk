# mk/man.mk - the nvfp4(1) man page, generated from the --help texts
# (mk/man.sh), and the bash completion (tools/nvfp4-completion.bash), both
# installed by `make install`. Included by the Makefile.

MAN_PAGE := $(BUILD)/share/man/man1/nvfp4.1
MAN_DIR := $(DESTDIR)$(PREFIX)/share/man/man1
COMPLETION_DIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions

.PHONY: man install-man uninstall-man

## man: generate $(BUILD)/share/man/man1/nvfp4.1 from `nvfp4 CMD --help`
man: $(MAN_PAGE)

$(MAN_PAGE): $(CLI) mk/man.sh
	@mkdir -p $(dir $@)
	sh mk/man.sh $(CLI) $(VERSION) > $@.tmp && mv $@.tmp $@

install: install-man
install-man: $(MAN_PAGE)
	install -d $(MAN_DIR) $(COMPLETION_DIR)
	install -m 644 $(MAN_PAGE) $(MAN_DIR)/nvfp4.1
	install -m 644 tools/nvfp4-completion.bash $(COMPLETION_DIR)/nvfp4

uninstall: uninstall-man
uninstall-man:
	rm -f $(MAN_DIR)/nvfp4.1 $(COMPLETION_DIR)/nvfp4
