# scheduler-py: the two set-up commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

PYTHON ?= python3
VENV ?= $(CURDIR)/.venv
PY := $(VENV)/bin/python
export VENV
STORM_HOME ?= $(CURDIR)/build/storm-home
export STORM_HOME
PLUGIN_JAR := storm_plugin/target/storm-scheduler-plugin.jar
PLUGIN_SOURCES := $(shell find storm_plugin/src -type f 2>/dev/null) storm_plugin/pom.xml storm_plugin/thrift-java.sh \
	scheduler_py/service/scheduler.thrift
# JVM benchmark topologies (topologies/README.md, "JVM topologies")
TOPOLOGIES_JAR := topologies/jvm/target/scheduler-py-topologies.jar
TOPOLOGIES_SOURCES := $(shell find topologies/jvm/src/main -type f 2>/dev/null) topologies/jvm/pom.xml

.PHONY: help deps build-deps venv plugin thrift-java dist topologies-jvm storm-home cluster-up cluster-down cluster-status demo \
	spark-up spark-down test lint test-java test-python bench bench-cluster compose-test clean

help:
	@echo "make demo     - set everything up, start a local Storm cluster scheduled by the brain, run word count"
	@echo "make test     - lint + Java unit tests + Python tests (incl. real-cluster integration tests)"
	@echo "make dist     - the release artifacts in dist/: the brain's wheel and sdist, scheduler-py-bench's, storm-scheduler-py-VERSION.jar"
	@echo "make thrift-java - regenerate the shim's committed Java Thrift code after a change to scheduler.thrift"
	@echo "make bench    - benchmarks (tables beside the papers' numbers, PNGs in bench-results/)"
	@echo "make bench-cluster - DefaultScheduler vs RAS vs the brain on a local cluster (BENCH_ARGS=--quick)"
	@echo "make cluster-up / cluster-down / cluster-status  (make cluster-up EMU_HOSTS=6: emulated hosts, deploy/README.md)"
	@echo "make topologies-jvm - build the JVM benchmark topologies jar ($(TOPOLOGIES_JAR))"
	@echo "make spark-up / spark-down - a Spark standalone master + worker on loopback (scheduler-py aggregate --master)"
	@echo "make compose-test - build and run docker-compose.yml for real and check it (starts/stops dockerd if needed)"

# build-deps: what building and running from a checkout needs (JDK, Maven, Python venv, zip,
# curl, ss); deps: those and everything `make test` needs (Thrift compiler, Chromium, Docker)
build-deps:
	deploy/install-build-deps.sh

deps:
	deploy/install-system-deps.sh

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

plugin: $(PLUGIN_JAR)

$(PLUGIN_JAR): $(PLUGIN_SOURCES) | build-deps
	mvn -q -B -f storm_plugin/pom.xml -DskipTests package

# the shim's Java Thrift code is committed (storm_plugin/src/generated); after editing
# scheduler_py/service/scheduler.thrift regenerate it (needs the Thrift compiler the pom names)
thrift-java:
	storm_plugin/thrift-java.sh regenerate

# the release artifacts (deploy/dist.sh; the checklist: docs/development.md, "Releasing")
dist: build-deps venv plugin
	PLUGIN_JAR=$(PLUGIN_JAR) deploy/dist.sh

topologies-jvm: $(TOPOLOGIES_JAR)

$(TOPOLOGIES_JAR): $(TOPOLOGIES_SOURCES) | build-deps
	mvn -q -B -f topologies/jvm/pom.xml -DskipTests package
	touch $@  # maven leaves an up-to-date jar's time alone

storm-home: plugin
	deploy/install-storm.sh

cluster-up: venv storm-home
	deploy/cluster-up.sh

cluster-down:
	deploy/cluster-down.sh

cluster-status:
	deploy/cluster-status.sh

# Spark standalone for `scheduler-py aggregate --master spark://127.0.0.1:7077` (deploy/spark-up.sh)
spark-up: venv
	deploy/spark-up.sh

spark-down:
	deploy/spark-down.sh

demo: build-deps venv storm-home
	deploy/demo.sh

lint: venv
	$(VENV)/bin/ruff check scheduler_py tests topologies deploy
	$(VENV)/bin/ruff format --check scheduler_py tests
	cd $(CURDIR) && $(VENV)/bin/lint-imports

test-java: deps
	mvn -q -B -f storm_plugin/pom.xml test
	mvn -q -B -f topologies/jvm/pom.xml test

test-python: venv storm-home topologies-jvm
	$(PY) -m pytest -ra

test: lint test-java test-python

bench: venv
	$(VENV)/bin/scheduler-py bench all

# the emulated-network evaluation (docs/evaluation.md): the JVM topologies under DefaultScheduler, RAS and the brain on a local cluster
# (emulated hosts when deploy/ provides them); BENCH_ARGS=--quick for the short run
bench-cluster: venv storm-home topologies-jvm
	$(VENV)/bin/scheduler-py bench cluster $(BENCH_ARGS)

# docker-compose.yml built, started, checked and removed (tests/cluster/test_compose.py);
# fails, rather than skips, where no Docker engine can be started
compose-test: venv
	SCHEDULER_PY_COMPOSE_TEST=require $(PY) -m pytest -ra -s tests/cluster/test_compose.py

clean:
	-deploy/cluster-down.sh
	-deploy/spark-down.sh
	rm -rf build dist storm_plugin/target topologies/jvm/target bench-results
