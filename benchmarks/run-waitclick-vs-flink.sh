#!/usr/bin/env bash
# The wait-click join as a flow-kafka pipeline vs the same job in Flink 2.2 (KeyedProcessFunction, RocksDB,
# timers, exactly-once Kafka sink, local MiniCluster), side by side on one in-JVM broker; each job in a JVM of
# its own. Builds the modules benchmarks-flink and benchmarks-waitclick (and what they need), then runs
# io.flowkafka.benchmarks.waitclick.WaitClickVsFlink with the given options (see --help), e.g.:
#   benchmarks/run-waitclick-vs-flink.sh                          # the comparison (keyed-source pipeline vs Flink, 5.1M records, ~15 min), updates benchmarks/RESULTS.md
#   benchmarks/run-waitclick-vs-flink.sh --impressions 20000 --warmup 0 --runs 1 --no-results   # a quick check (~1 min)
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS (replaces the driver's heap settings),
# SKIP_BUILD=1 to reuse the last build. The output is also written to benchmarks-waitclick/target/last-run.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  # package (not install): examples and the two benchmark modules are used from their target/ directories;
  # each module's runtime jars are copied to its target/lib at package time
  rm -rf benchmarks-flink/target/lib benchmarks-waitclick/target/lib
  mvn -B -q ${MAVEN_ARGS:-} package -Dmaven.test.skip=true -pl benchmarks-flink,benchmarks-waitclick -am
  dirty=$(git status --porcelain -- flow-kafka-core 2>/dev/null | wc -l)
  echo "flow-kafka $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([[ "$dirty" != 0 ]] && echo " + $dirty uncommitted file(s) in flow-kafka-core"), built $(date -u +%Y-%m-%dT%H:%MZ)" \
    > benchmarks-waitclick/target/built-from.txt
fi
# the driver JVM: broker, input producer, result meters; the jobs get their own JVMs (--job-heap)
java ${JAVA_OPTS:--Xms2g -Xmx2g} \
  -Dbench.built.from="$(cat benchmarks-waitclick/target/built-from.txt 2>/dev/null || echo unknown)" \
  -cp "benchmarks-waitclick/target/classes:benchmarks-waitclick/target/lib/*" \
  io.flowkafka.benchmarks.waitclick.WaitClickVsFlink \
  --flink-classpath "benchmarks-flink/target/classes:benchmarks-flink/target/lib/*" "$@" \
  2>&1 | tee benchmarks-waitclick/target/last-run.log
exit "${PIPESTATUS[0]}"
