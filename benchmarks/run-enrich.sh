#!/usr/bin/env bash
# The enrich benchmark (issue 24): a flow-kafka Transform with an external_state_joiner vs the same join as a plain
# Kafka Streams GlobalKTable (or co-partitioned KTable) join, side by side on one in-JVM broker, each job in a JVM
# of its own. Builds the benchmarks module and what it needs, then runs io.flowkafka.benchmarks.EnrichBenchmark with
# the given options (see --help), e.g.:
#   benchmarks/run-enrich.sh                                                  # the comparison, updates benchmarks/RESULTS.md
#   benchmarks/run-enrich.sh --events 20000 --keys 5000 --warmup 0 --runs 1 --no-results   # a quick check
#   benchmarks/run-enrich.sh --jobs flow,plain-global,plain-table,flow-two-hop             # every job
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS (replaces the driver's heap settings),
# SKIP_BUILD=1 to reuse the last build. The output is also written to benchmarks/target/enrich-last-run.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  # package (not install): flow-kafka's modules come from the work tree; the benchmarks module's runtime jars are
  # copied to benchmarks/target/lib at package time
  rm -rf benchmarks/target/lib
  mvn -B -q ${MAVEN_ARGS:-} package -Dmaven.test.skip=true -pl benchmarks -am
  dirty=$(git status --porcelain -- flow-kafka-core 2>/dev/null | wc -l)
  echo "flow-kafka $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([[ "$dirty" != 0 ]] && echo " + $dirty uncommitted file(s) in flow-kafka-core"), built $(date -u +%Y-%m-%dT%H:%MZ)" \
    > benchmarks/target/built-from.txt
fi
# the driver JVM: broker, input producers, output meters; the jobs get their own JVMs (--job-heap)
java ${JAVA_OPTS:--Xms2g -Xmx2g} \
  -Dbench.built.from="$(cat benchmarks/target/built-from.txt 2>/dev/null || echo unknown)" \
  -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
  io.flowkafka.benchmarks.EnrichBenchmark "$@" \
  2>&1 | tee benchmarks/target/enrich-last-run.log
exit "${PIPESTATUS[0]}"
