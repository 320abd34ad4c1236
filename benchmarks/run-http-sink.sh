#!/usr/bin/env bash
# The HTTP sink benchmark (issue 26): requests/s through TAsyncHttpSink vs a plain JDK HttpClient loop posting the
# same bodies to the same loopback server with as many requests in flight, side by side in one JVM (with the in-JVM
# broker). Builds the benchmarks module and what it needs, then runs io.flowkafka.benchmarks.HttpSinkBenchmark with
# the given options (see --help), e.g.:
#   benchmarks/run-http-sink.sh                                       # 20000 messages, concurrency 4, one run
#   benchmarks/run-http-sink.sh --messages 5000 --runs 1              # a quick check
#   benchmarks/run-http-sink.sh --concurrency 16 --service-us 500     # a slower target, more in flight
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS (replaces the heap settings), SKIP_BUILD=1 to reuse the
# last build. The output is also written to benchmarks/target/http-sink-last-run.log. It does not touch RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  rm -rf benchmarks/target/lib
  mvn -B -q ${MAVEN_ARGS:-} package -Dmaven.test.skip=true -pl benchmarks -am
  dirty=$(git status --porcelain -- flow-kafka-core flow-kafka-connectors 2>/dev/null | wc -l)
  echo "flow-kafka $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([[ "$dirty" != 0 ]] && echo " + $dirty uncommitted file(s)"), built $(date -u +%Y-%m-%dT%H:%MZ)" \
    > benchmarks/target/built-from.txt
fi
java ${JAVA_OPTS:--Xms1g -Xmx1g} \
  -Dbench.built.from="$(cat benchmarks/target/built-from.txt 2>/dev/null || echo unknown)" \
  -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
  io.flowkafka.benchmarks.HttpSinkBenchmark "$@" \
  2>&1 | grep -v -E '^(\[|\s)' | tee benchmarks/target/http-sink-last-run.log
exit "${PIPESTATUS[0]}"
