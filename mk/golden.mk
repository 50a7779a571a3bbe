# mk/golden.mk - the golden suite (reference/) and SHA-256 for MANIFESTs.
#
# libcrypto (Debian libssl-dev) provides SHA-256 (EVP) for MANIFEST files and
# meta.json checksums; the lead may move this into the Makefile's PKG_LIBS.
PKG_LIBS += -lcrypto
