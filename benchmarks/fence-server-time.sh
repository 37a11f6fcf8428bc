#!/usr/bin/env bash
# Server time of a fenced write against a plain one, as Redis itself counts it (INFO commandstats,
# usec_per_call), on a private redis-server: the fenced SET and HSET scripts exactly as the core
# builds them (fence-inline.lua with the write in place), each run N times within one term (the
# mark holds the token, the common case), then plain SET and HSET, and a script that does nothing
# (`return 1`): what any script call costs Redis before it runs a command.
#   benchmarks/fence-server-time.sh [N]      (N defaults to 200000)
#   FENCE_TEMPLATE=<file> measures another template with the same --[[write]] placeholder.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200000}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize yes \
  --pidfile "$dir/redis.pid" >/dev/null
trap 'kill "$(cat "$dir/redis.pid")" 2>/dev/null; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 1 50); do cli ping >/dev/null 2>&1 && break; sleep 0.1; done
template=${FENCE_TEMPLATE:-redlease-core/src/main/resources/io/redlease/core/fence-inline.lua}
script() { python3 -c 'import sys; print(open(sys.argv[1]).read().replace("--[[write]]", sys.argv[2]))' "$template" "$1"; }
set_sha=$(cli script load "$(script "redis.call('SET', KEYS[2], ARGV[2])")")
hset_sha=$(cli script load "$(script "redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])")")
empty_sha=$(cli script load "return 1")
cli set bench:fence:applied 7 >/dev/null
measure() {
  local label=$1 cmd=$2; shift 2
  cli config resetstat >/dev/null
  redis-benchmark -p "$port" -n "$n" -c 1 -q "$@" >/dev/null 2>&1
  printf '%-14s %s\n' "$label" "$(cli info commandstats | tr -d '\r' | grep "^cmdstat_$cmd:" | sed 's/.*usec_per_call=\([0-9.]*\).*/\1 us per call/')"
}
echo "redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $n calls each, one connection"
measure "fenced SET" evalsha evalsha "$set_sha" 2 bench:fence:applied bench:key 7 value
measure "plain SET" set set bench:key value
measure "fenced HSET" evalsha evalsha "$hset_sha" 2 bench:fence:applied bench:hash 7 field value
measure "plain HSET" hset hset bench:hash field value
measure "empty script" evalsha evalsha "$empty_sha" 0
