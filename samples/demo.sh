#!/usr/bin/env bash
# The redlease demo: three instances of samples/scheduled-job contend for one election on Redis;
# watch a graceful hand-off, a crash across a report slot (caught up, not missed or doubled) and a
# freeze, and the fence refusing a stale write. Then instances of samples/partitioned-job share 16
# partitions while one joins, one leaves and one is killed.
# Needs Java 17+ and Maven, and Redis: REDIS_URL, or one on 127.0.0.1:6379, or redis-server on
# the PATH, or Docker. Usage: samples/demo.sh [--fresh-redis] [--partitions-only]
#   --fresh-redis ignores 6379; --partitions-only runs the partition chapter alone.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v java >/dev/null || { echo "Java 17 or newer is needed (java not found)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "Maven is needed (mvn not found)" >&2; exit 1; }

echo "==> Building the samples and the demo (the first run downloads dependencies)..."
started=$(date +%s)
if ! mvn -q -B -ntp -DskipTests -Dspotless.check.skip=true \
      -pl samples/scheduled-job,samples/partitioned-job,samples/demo -am package > target-demo-build.log 2>&1; then
  cat target-demo-build.log >&2
  echo "Build failed; the log is above." >&2
  exit 1
fi
rm -f target-demo-build.log
echo "==> Built in $(( $(date +%s) - started ))s"

jar=$(ls samples/scheduled-job/target/redlease-sample-scheduled-job-*.jar | grep -v original | head -n 1)
partitioned=$(ls samples/partitioned-job/target/redlease-sample-partitioned-job-*.jar | grep -v original | head -n 1)
exec java -cp samples/demo/target/classes io.redlease.samples.demo.Demo --jar "$jar" \
  --partitioned-jar "$partitioned" "$@"
