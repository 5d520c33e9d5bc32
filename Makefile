# issues — build, test, benchmark and demo. Every target installs what it needs that is missing
# (Debian packages via apt-get; run as root or with sudo available).

SWIFT      ?= swift
APT_GET    := $(shell command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo) apt-get
# Debian packages each target needs: package name = a file it installs.
BUILD_PKGS := libarchive-dev:/usr/include/archive.h pkg-config:/usr/bin/pkg-config
# The catalog's database: GRDB links Debian's SQLite; the sqlite3 shell reads it in tests and by hand.
BUILD_PKGS += libsqlite3-dev:/usr/include/sqlite3.h sqlite3:/usr/bin/sqlite3
# Covers (NewsstandCovers): libvips decodes and resizes images, poppler-glib renders a PDF's first page. libvips
# brings Pango and fontconfig, and fontconfig a font (fonts-dejavu-core), which the placeholder's text needs.
BUILD_PKGS += libvips-dev:/usr/include/vips/vips.h libpoppler-glib-dev:/usr/include/poppler/glib/poppler.h
TEST_PKGS  := curl:/usr/bin/curl python3:/usr/bin/python3 openssl:/usr/bin/openssl
# The service test checks the unit file with `systemd-analyze verify`.
TEST_PKGS  += systemd:/usr/bin/systemd-analyze
# The flush-order test reads the system calls of a download with strace.
TEST_PKGS  += strace:/usr/bin/strace
BENCH_PKGS := libvips-tools:/usr/bin/vips nginx-light:/usr/sbin/nginx aria2:/usr/bin/aria2c libarchive-tools:/usr/bin/bsdtar curl:/usr/bin/curl unzip:/usr/bin/unzip python3:/usr/bin/python3
DEMO_PKGS  := python3:/usr/bin/python3
# `make browser-test`: Debian's Chromium and its WebDriver.
BROWSER_PKGS := chromium:/usr/bin/chromium chromium-driver:/usr/bin/chromedriver python3:/usr/bin/python3 python3-pip:/usr/bin/pip3
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
# Release builds link the Swift runtime and Foundation in (see `release`).
STATIC_STDLIB := --static-swift-stdlib
# Release builds also link with the toolchain's ld.lld, when it is there and glibc is 2.36 or newer:
# relative relocations packed (DT_RELR: 23 KB instead of the 2.8 MB of .rela.dyn that the loader reads at
# every start) and no exported symbols (Release/exports.map). Together they take about 4 MiB off a
# download's peak resident memory (bench `large`), and the binary keeps its position independence (ASLR).
# Elsewhere the release build links as before.
LLD          := $(shell command -v ld.lld 2>/dev/null)
GLIBC_RELR   := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ split($$2, v, "."); if (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) print "yes" }')
RELEASE_TOOLSET := .build/release-toolset.json
RELEASE_LINK := $(if $(and $(LLD),$(GLIBC_RELR)),--toolset $(RELEASE_TOOLSET) -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --version-script=$(CURDIR)/Release/exports.map)
RELEASE_FLAGS = $(STATIC_STDLIB) $(RELEASE_LINK)
# The image libraries of covers are opened on first use (dlopen, Sources/CVips/shim.h and CPoppler/shim.h), and
# the binary references none of their symbols; but SwiftPM puts their pkg-config `-l` flags first on the link
# line, before any --as-needed, so their DT_NEEDED entries are removed after the link. Every other command then
# starts without loading them and their ~100 dependencies: `issues --version` 17 MiB and under 10 ms instead of
# 37 MiB and 30-80 ms (release build, 2026-11-26).
RELEASE_PKGS     := patchelf:/usr/bin/patchelf
COVER_LIBRARIES  := libvips.so.42 libpoppler-glib.so.8 libcairo.so.2 libgobject-2.0.so.0 libglib-2.0.so.0 libgio-2.0.so.0
COVER_SYMBOLS    := ' (vips|poppler|cairo|g|gdk|pango)_'
# Where swift-argument-parser's generate-manual plugin writes the page.
MANPAGE       := .build/plugins/GenerateManual/outputs/issues/issues.1

.PHONY: all build release test bench demo docs tour tour-check soak deps browser-test api-test openapi bench-serve serve-py-deps test-deps bench-deps demo-deps clean package-check strict-check fuzz fuzz-smoke fuzz-build fuzz-replay

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

# A target may import only the targets it names in Package.swift: an import against the layers' arrows is an
# error, not something that builds because the module happened to be built first.
IMPORT_CHECK := --explicit-target-dependency-import-check error

build: deps
	$(SWIFT) build $(IMPORT_CHECK)

# The Swift runtime and Foundation linked in: the binary runs where no Swift toolchain is installed, and
# a download's peak memory is 3 MiB lower (no dynamic loading of the Swift libraries).
release: deps release-toolset
	$(call install_missing,$(RELEASE_PKGS))
	$(SWIFT) build -c release --product issues $(RELEASE_FLAGS)
	@if nm -D --undefined-only $(ISSUES_BIN) | grep -qE $(COVER_SYMBOLS); then \
	  echo "release: the binary references the image libraries directly; their entries stay"; \
	else \
	  for lib in $(COVER_LIBRARIES); do patchelf --remove-needed $$lib $(ISSUES_BIN); done; \
	  $(ISSUES_BIN) --version >/dev/null; \
	fi

# SwiftPM takes the linker from a toolset file; its path is this machine's, so the file is written here.
.PHONY: release-toolset
release-toolset:
	@mkdir -p .build
	@if [ -n "$(RELEASE_LINK)" ]; then \
	  printf '{ "schemaVersion": "1.0", "linker": { "path": "%s" } }\n' '$(LLD)' > $(RELEASE_TOOLSET); fi

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

install: deps release-toolset
	$(SWIFT) build -c $(CONFIGURATION) --product issues $(if $(filter release,$(CONFIGURATION)),$(RELEASE_FLAGS))
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
	$(SWIFT) build --build-tests $(IMPORT_CHECK)
	$(MAKE) manual CONFIGURATION=debug  # for the test of `make install-files`
	# Two processes: the CLI tests wait for child processes synchronously, which holds threads of Swift's
	# cooperative pool (two on a two-core machine); run beside them, the library's async tests starved past
	# their time limits (AssetPlacerTests took 177 s against a 120 s limit). Each half has the pool to itself.
	$(SWIFT) test --skip-build --skip IssuesCLITests
	$(SWIFT) test --skip-build --filter IssuesCLITests

bench: bench-deps release
	python3 bench/bench.py

# The kill -9 soak (Tests/Soak/soak.py): downloads (some segmented), unpacks, removals, syncs and prunes run
# together against a private nginx for SOAK_SECONDS, random ones killed with SIGKILL; after each round the
# library is resumed, every available issue's files are checked by SHA-256 and `issues verify` must be clean.
# Opt-in: not part of `make test` nor of CI. SOAK_SEED repeats a run.
SOAK_SECONDS ?= 600
.PHONY: soak
soak: test-deps bench-deps
	$(SWIFT) build --product issues
	SOAK_SECONDS=$(SOAK_SECONDS) python3 Tests/Soak/soak.py --issues .build/debug/issues

# The upgrade of a version-3 library of 100,000 issues killed with SIGKILL at 20 random points (`make test`:
# 1,000 issues, 6 points; ISSUES_KILL_SEED repeats a run). Opt-in: each round writes and upgrades a library.
.PHONY: upgrade-kills
upgrade-kills: test-deps
	$(SWIFT) build --build-tests
	ISSUES_UPGRADE_COUNT=100000 ISSUES_UPGRADE_KILLS=20 $(SWIFT) test --skip-build --filter aKillAnywhereInTheVersionThreeUpgradeLosesNothing

# The scheduler's simulated week at the issue's size, 1,000 feeds (`make test` runs 100), and the service
# killed with SIGKILL at 50 random points (`make test`: 6; ISSUES_KILL_SEED repeats a run).
.PHONY: schedule-week
schedule-week: test-deps
	$(SWIFT) build --build-tests $(IMPORT_CHECK)
	ISSUES_SCHEDULE_FEEDS=1000 $(SWIFT) test --skip-build --filter SimulatedWeekTests
	ISSUES_SERVICE_KILLS=50 $(SWIFT) test --skip-build --filter ServiceKillCLITests

demo: demo-deps
	$(SWIFT) build --product issues
	$(SWIFT) build --product sample-server
	$(SWIFT) build --product sample-reader
	bash Samples/demo.sh

# MARK: - Documentation and the README's tour
# The DocC catalogue of the `Newsstand` product (Sources/Newsstand/Newsstand.docc: a landing page and an article
# per task) with the API's symbols, by swift-docc-plugin, into .build/docs (a static site). Fails on any warning
# about the catalogue's own pages (docc locates those at `--> ARTICLE.md:LINE`), such as a broken symbol link in
# an article. Not --warnings-as-errors: a dozen doc comments in the sources link to types of the re-exported
# layers (``Issue``, ``PrunePolicy``), which do not resolve from this target.
DOCS_DIR := .build/docs
DOCS_LOG := .build/docs.log
docs: deps
	@mkdir -p .build
	@status=0; $(SWIFT) package --allow-writing-to-directory $(DOCS_DIR) generate-documentation --target Newsstand \
	  --output-path $(DOCS_DIR) --transform-for-static-hosting --disable-indexing > $(DOCS_LOG) 2>&1 || status=$$?; \
	if [ $$status -ne 0 ]; then cat $(DOCS_LOG); exit $$status; fi; \
	if grep -q -E '^ *--> [^ ]*\.md:' $(DOCS_LOG); then \
	  grep -B1 -A5 -E '^ *--> [^ ]*\.md:' $(DOCS_LOG); echo "docs: the catalogue has warnings (full log in $(DOCS_LOG))"; exit 1; fi; \
	echo "docs: $(DOCS_DIR) ($$(grep -c -E '^ *--> ' $(DOCS_LOG)) warnings about doc comments, none about the catalogue)"

# The README's tour of the command line (between its tour markers), from a real run against the sample publisher
# on 127.0.0.1 (Samples/readme_tour.py). `make tour` rewrites the block; `make tour-check` fails when it differs
# from a fresh run.
TOUR_BUILD = $(SWIFT) build --product issues && $(SWIFT) build --product sample-server
tour: demo-deps
	$(TOUR_BUILD)
	python3 Samples/readme_tour.py --write

tour-check: demo-deps
	$(TOUR_BUILD)
	python3 Samples/readme_tour.py --check

# MARK: - issues serve
# PyPI tools of the serve tests, installed once (a marker file per set): Selenium and axe (axe-selenium-python
# ships axe-core's script) for the browser test, schemathesis for the API test.
PY_MARKERS := .build/py-markers
$(PY_MARKERS)/browser:
	$(call install_missing,$(BROWSER_PKGS))
	python3 -m pip install -q selenium axe-selenium-python || python3 -m pip install -q --break-system-packages selenium axe-selenium-python
	@mkdir -p $(PY_MARKERS) && touch $@
$(PY_MARKERS)/schemathesis:
	python3 -m pip install -q schemathesis || python3 -m pip install -q --break-system-packages schemathesis
	@mkdir -p $(PY_MARKERS) && touch $@

# Headless Chromium drives `issues serve` as a person would (Tests/Browser/browser_test.py); screenshots at
# desktop and phone width land in .build/browser-artifacts/.
browser-test: deps $(PY_MARKERS)/browser
	$(SWIFT) build --product issues
	$(SWIFT) build --product sample-server
	python3 Tests/Browser/browser_test.py

# schemathesis sends generated requests to a running `issues serve` and checks every answer against the
# committed OpenAPI document: no 5xx, no schema violation (Tests/API/api_test.sh).
api-test: deps $(PY_MARKERS)/schemathesis
	$(SWIFT) build --product issues
	bash Tests/API/api_test.sh

# The Swift copy of the committed OpenAPI document (run after editing openapi.json; a test compares them).
openapi:
	python3 Tests/API/openapi_swift.py

# The serve row of the benchmark on the 100,000-issue library (bench/serve.py); opt-in, as it builds that library.
bench-serve: bench-deps release $(PY_MARKERS)/browser
	python3 bench/serve.py

# The library built with `-require-explicit-sendable` (every public type says whether it is Sendable),
# passed on the command line: a flag in Package.swift would be an unsafe flag, which SwiftPM refuses in
# packages that others depend on. Its own build folder, so the everyday build keeps its flags. Fails on
# any warning or error in the library's layers (Sources/Newsstand*).
strict-check: deps
	@status=0; $(SWIFT) build --target Newsstand --scratch-path .build-strict \
	  -Xswiftc -Xfrontend -Xswiftc -require-explicit-sendable > .build-strict.log 2>&1 || status=$$?; \
	grep -E "Sources/Newsstand[A-Za-z]*/.*: (warning|error):" .build-strict.log && status=1; \
	tail -n 1 .build-strict.log; exit $$status

# Builds and runs a throw-away package that depends on this one by URL and version, as a user's would
# (a bare clone of HEAD tagged with a version): no unsafe flags may reach it. Its program is the README's
# API example (Samples/API/main.swift), run against python3's web server.
package-check: demo-deps
	bash Samples/package-check.sh

# An annotated semver tag for the version Sources/NewsstandCore/NewsstandInfo.swift names (the one version
# source), once the tree is clean and CHANGELOG.md has its section; never pushed. DRY_RUN=1 only checks.
.PHONY: release-tag
release-tag:
	bash Release/release-tag.sh

clean:
	rm -rf .build .build-fuzz

# MARK: - Conformance
# Judges `subscribe`/`sync` against other feed parsers' test data (podcastparser, feedparser, AntennaPod, the
# JSON Feed examples, captured real feeds): the suite and its data live beside the repository, in
# ../shared/conformance/feeds, and are not ours to edit. Prints every line that is not a PASS, the suite's
# summary, the failures by class and the pass rate of the lines that are not `peer-specific` (a peer's own
# quirk, not ours to copy). Fails when any failure is of the class `project-wrong`; `ambiguous` ones are left
# to judgement, so the suite's own exit status (1 on any failure) is not ours. CONFORMANCE_ARGS passes
# options through (`--source podcastparser`, `--only SUBSTR`, `-v`).
CONFORMANCE_DIR           ?= ../shared/conformance/feeds
CONFORMANCE_CONFIGURATION ?= debug
CONFORMANCE_ARGS          ?=
CONFORMANCE_LOG           := .build/conformance.log
# Cases where SPEC asks for what the peer does not do (a case name, a tab, why): reported, not failed.
CONFORMANCE_DELIBERATE    := Tests/Conformance/deliberate.tsv

.PHONY: conformance
conformance: test-deps
	$(SWIFT) build -c $(CONFORMANCE_CONFIGURATION) --product issues
	@mkdir -p .build
	@# The runner exits 1 whenever any case fails (peer-specific ones too), so its status is not the verdict;
	@# a missing suite or a run that judged nothing is, and fails here instead of passing with 0 failures.
	@test -f $(CONFORMANCE_DIR)/run_peer.py || { echo "conformance: no suite at $(CONFORMANCE_DIR)"; exit 1; }
	@ISSUES_BIN=$(CURDIR)/.build/$(CONFORMANCE_CONFIGURATION)/issues python3 $(CONFORMANCE_DIR)/run_peer.py \
	  $(CONFORMANCE_ARGS) > $(CONFORMANCE_LOG); \
	grep -qE '^(PASS|FAIL) ' $(CONFORMANCE_LOG) || { echo "conformance: no case was judged ($(CONFORMANCE_LOG))"; exit 1; }; \
	grep -v '^PASS ' $(CONFORMANCE_LOG); \
	awk '/^(PASS|FAIL|SKIP) / { lines++ } /^PASS / { pass++ } \
	  /^FAIL / { n = split("project-wrong ambiguous peer-specific", cls, " "); \
	    for (k = 1; k <= n; k++) if (index($$0, "[" cls[k] "]")) count[cls[k]]++; \
	    if (!index($$0, "[project-wrong]") && !index($$0, "[ambiguous]")) peer++ } \
	  END { printf "failures by class: project-wrong %d, ambiguous %d, peer-specific %d\n", \
	    count["project-wrong"], count["ambiguous"], count["peer-specific"]; \
	    if (lines - peer > 0) printf "pass rate of the lines that are not peer-specific: %d/%d = %.1f %%\n", \
	      pass, lines - peer, 100 * pass / (lines - peer) }' $(CONFORMANCE_LOG); \
	deliberate=$$(cut -f1 $(CONFORMANCE_DELIBERATE) | sed 's/^/FAIL /; s/$$/:/'); \
	wrong=$$(grep '^FAIL .*\[project-wrong\]' $(CONFORMANCE_LOG) | grep -v -F "$$deliberate"); \
	grep '^FAIL .*\[project-wrong\]' $(CONFORMANCE_LOG) | grep -F "$$deliberate" | \
	  sed 's|^FAIL |deliberate (see $(CONFORMANCE_DELIBERATE)): |'; \
	if [ -n "$$wrong" ]; then \
	  echo "conformance: project-wrong failures (full log in $(CONFORMANCE_LOG))"; exit 1; fi

# MARK: - Fuzzing
# libFuzzer targets: each Fuzz/NAME is an executable target of Package.swift that depends on the layer it
# fuzzes (NewsstandCore, NewsstandArchive, NewsstandCatalog, NewsstandFeeds, NewsstandCovers), so it calls the product's own
# parser and the graph lives in one place. `make fuzz` builds them with `--sanitize fuzzer --sanitize
# address` and `-DFUZZING` in their own build folder, then runs each for FUZZ_SECONDS, one after another, on
# a copy of its seed corpus (Fuzz/Corpus/NAME stays as committed); crashes land in .build-fuzz/artifacts/NAME/.
# Fuzzing is background work: it runs at the lowest priority. `make fuzz-replay` runs every seed corpus once
# through the plain build of the same targets.

FUZZ_SECONDS ?= 600
FUZZ_NICE    ?= nice -n 19
FUZZ_DIR     := .build-fuzz
FUZZ_TARGETS := JSONReader CatalogRecord ContentRange RetryAfter ContentDisposition ArchivePath FeedParser CoverImage
# `--sanitize fuzzer` tells SwiftPM that libFuzzer brings `main`; the sanitizers themselves go in one
# `-sanitize=fuzzer,address`: swiftc keeps only the last of several `-sanitize=` flags, and SwiftPM's
# `--sanitize fuzzer --sanitize address` loses the coverage counters (libFuzzer then sees no coverage at all).
FUZZ_BUILD   := $(FUZZ_NICE) $(SWIFT) build -c release --scratch-path $(FUZZ_DIR) --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address \
                -Xswiftc -DFUZZING -Xswiftc -g -Xswiftc -use-ld=lld

# Longest input tried: a few catalog records; a header line; a path up to PATH_MAX plus a link target;
# a feed of a few items.
FUZZ_MAXLEN_JSONReader         := 16384
FUZZ_MAXLEN_CatalogRecord      := 65536
FUZZ_MAXLEN_ContentRange       := 256
FUZZ_MAXLEN_RetryAfter         := 256
FUZZ_MAXLEN_ContentDisposition := 1024
FUZZ_MAXLEN_ArchivePath        := 8192
FUZZ_MAXLEN_FeedParser         := 16384
# An image of a few kilobytes reaches every decoder's header and first blocks.
FUZZ_MAXLEN_CoverImage         := 65536
# A few kilobytes may declare up to the 100-megapixel limit, which libvips then decodes: with ASan's quarantine a
# 20 s run peaked at 1,067 MiB here, near libFuzzer's default 2,048 MiB limit (which counts as a crash).
FUZZ_RSS_CoverImage            := 6144

# SwiftPM decides what is stale; one build folder for all targets, so the layers are built once.
# (A static pattern rule: make searches no implicit rule for a phony target.)
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/release/Fuzz,$(FUZZ_TARGETS))
.PHONY: $(FUZZ_BINS)
$(FUZZ_BINS): $(FUZZ_DIR)/release/Fuzz%: | deps
	$(FUZZ_BUILD) --product Fuzz$*

fuzz-build: $(FUZZ_BINS)

# One target on a scratch copy of its corpus, so that the inputs libFuzzer adds do not land in the tree.
# Swift's own backtracer is off: it reads memory ASan reports, and libFuzzer prints the stack anyway.
# Hashing is fixed so that a run with a fixed seed takes the same paths (Swift seeds it per process otherwise).
fuzz-run-%: $(FUZZ_DIR)/release/Fuzz%
	@mkdir -p $(FUZZ_DIR)/artifacts/$*
	@work=$$(mktemp -d) && cp Fuzz/Corpus/$*/* "$$work"/ && \
	echo "== fuzz $* for $(FUZZ_SECONDS) s, max_len $(FUZZ_MAXLEN_$*)" && \
	SWIFT_BACKTRACE=enable=no SWIFT_DETERMINISTIC_HASHING=1 LSAN_OPTIONS=suppressions=Fuzz/lsan.supp \
	  $(FUZZ_NICE) $(FUZZ_DIR)/release/Fuzz$* "$$work" -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAXLEN_$*) \
	  -timeout=10 -rss_limit_mb=$(or $(FUZZ_RSS_$*),2048) -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$*/ $(if $(FUZZ_SEED),-seed=$(FUZZ_SEED)); \
	status=$$?; rm -rf "$$work"; exit $$status

# Runs every target even after one fails, then fails if any did.
fuzz: fuzz-build
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  $(MAKE) --no-print-directory fuzz-run-$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (inputs in $(FUZZ_DIR)/artifacts/)"; exit 1; fi

# Every seed corpus once through the plain build of the targets (no libFuzzer): the committed findings stay fixed.
fuzz-replay: deps
	@for t in $(FUZZ_TARGETS); do $(SWIFT) build --product Fuzz$$t >/dev/null && \
	  printf '%s: ' $$t && .build/debug/Fuzz$$t Fuzz/Corpus/$$t || exit 1; done

# CI's short run: a fixed seed, so that it explores the same inputs every time (a failure reproduces).
fuzz-smoke:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20 FUZZ_SEED=1
