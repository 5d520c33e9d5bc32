# issues — build, test, benchmark and demo. Every target installs what it needs that is missing
# (Debian packages via apt-get; run as root or with sudo available).

SWIFT      ?= swift
APT_GET    := $(shell command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo) apt-get
# Debian packages each target needs: package name = a file it installs.
BUILD_PKGS := libarchive-dev:/usr/include/archive.h pkg-config:/usr/bin/pkg-config
TEST_PKGS  := curl:/usr/bin/curl python3:/usr/bin/python3 openssl:/usr/bin/openssl
BENCH_PKGS := nginx-light:/usr/sbin/nginx aria2:/usr/bin/aria2c libarchive-tools:/usr/bin/bsdtar curl:/usr/bin/curl unzip:/usr/bin/unzip python3:/usr/bin/python3
DEMO_PKGS  := python3:/usr/bin/python3
# The install test renders the man page with `man -l`.
TEST_PKGS  += man-db:/usr/bin/man

# `make install`: where things go (DESTDIR is prepended for staged installs, as packagers expect).
PREFIX        ?= /usr/local
CONFIGURATION ?= release
BINDIR        := $(DESTDIR)$(PREFIX)/bin
MAN1DIR       := $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR   := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR    := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHCOMPDIR   := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
ISSUES_BIN    := .build/$(CONFIGURATION)/issues
# Where swift-argument-parser's generate-manual plugin writes the page.
MANPAGE       := .build/plugins/GenerateManual/outputs/issues/issues.1

.PHONY: all build release test bench demo deps test-deps bench-deps demo-deps clean

all: build

# Installs the packages of $(1) whose marker file is missing; apt-get update runs once, first.
define install_missing
	@missing=""; for spec in $(1); do pkg=$${spec%%:*}; file=$${spec#*:}; \
	  [ -e "$$file" ] || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(BUILD_PKGS))

test-deps: deps
	$(call install_missing,$(TEST_PKGS))

bench-deps: deps
	$(call install_missing,$(BENCH_PKGS))

demo-deps: deps
	$(call install_missing,$(DEMO_PKGS))

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product issues

# The man page, from the built command's own help (--experimental-dump-help) by swift-argument-parser's
# plugin. Its DESCRIPTION carries the environment variables and exit statuses (the root command's
# discussion, also in --help), as the plugin has no ENVIRONMENT section and its EXIT STATUS says only
# "0 on success, >0 on error": that line (`.Ex -std`) is replaced by the list. Blank lines between
# paragraphs become `.Pp`, mdoc's paragraph macro (man warns about empty input lines).
EXIT_STATUSES := .Bl -tag -width 4n\n.It 0\nSuccess.\n.It 1\nA command failed: one line beginning error: on stderr says what and where.\n.It 64\nA usage error: an unknown option or a bad value.\n.It 130\nInterrupted (Ctrl-C or SIGTERM); partial downloads are kept for issues resume.\n.El
.PHONY: manual install install-files
manual: deps
	$(SWIFT) package plugin generate-manual --configuration $(CONFIGURATION)
	sed -i -e 's/^$$/.Pp/' -e 's/^\.Ex -std$$/$(EXIT_STATUSES)/' $(MANPAGE)

install: deps
	$(SWIFT) build -c $(CONFIGURATION) --product issues
	$(MAKE) manual install-files

# Copies what the two steps above built; no Swift build, so the tests can run it while `swift test`
# holds the build folder's lock.
install-files:
	install -d $(BINDIR) $(MAN1DIR) $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 $(ISSUES_BIN) $(BINDIR)/issues
	install -m 0644 $(MANPAGE) $(MAN1DIR)/issues.1
	$(ISSUES_BIN) --generate-completion-script bash > $(BASHCOMPDIR)/issues
	$(ISSUES_BIN) --generate-completion-script zsh > $(ZSHCOMPDIR)/_issues
	$(ISSUES_BIN) --generate-completion-script fish > $(FISHCOMPDIR)/issues.fish
	@echo "installed $(BINDIR)/issues; make sure $(PREFIX)/bin is on your PATH"

test: test-deps
	$(SWIFT) build --build-tests
	$(MAKE) manual CONFIGURATION=debug  # for the test of `make install-files`
	$(SWIFT) test --skip-build

bench: bench-deps release
	python3 bench/bench.py

demo: demo-deps
	$(SWIFT) build --product issues
	$(SWIFT) build --product sample-server
	$(SWIFT) build --product sample-reader
	bash Samples/demo.sh

clean:
	rm -rf .build
