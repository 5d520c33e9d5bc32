# issues — build, test, benchmark and demo. Every target installs what it needs that is missing
# (Debian packages via apt-get; run as root or with sudo available).

SWIFT      ?= swift
APT_GET    := $(shell command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo) apt-get
# Debian packages each target needs: package name = a file it installs.
BUILD_PKGS := libarchive-dev:/usr/include/archive.h pkg-config:/usr/bin/pkg-config
TEST_PKGS  := curl:/usr/bin/curl python3:/usr/bin/python3 openssl:/usr/bin/openssl
BENCH_PKGS := nginx-light:/usr/sbin/nginx aria2:/usr/bin/aria2c libarchive-tools:/usr/bin/bsdtar curl:/usr/bin/curl unzip:/usr/bin/unzip python3:/usr/bin/python3
DEMO_PKGS  := python3:/usr/bin/python3

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

test: test-deps
	$(SWIFT) build --build-tests
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
