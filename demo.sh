#!/usr/bin/env bash
# Runs the flow-kafka demo: builds what it needs, starts an in-JVM Kafka broker, produces sample
# events, runs the per-user activity pipeline with exactly-once and prints the counts.
# Pass --bootstrap-servers host:port to use a real cluster instead.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q -DskipTests install -pl examples -am
mvn -B -q -pl examples dependency:build-classpath -Dmdep.outputFile=target/demo.classpath -Dmdep.includeScope=runtime
exec java -Xmx512m -cp "examples/target/classes:$(cat examples/target/demo.classpath)" \
  io.flowkafka.examples.activity.ActivityDemo "$@"
