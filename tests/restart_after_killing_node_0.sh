#!/bin/sh
# restart_after_killing_node_0.sh KEY PROGRAM ARGS...: PROGRAM ARGS over node processes, written to a
# checkpoint directory between calls, is SIGKILLed at node 0 mid-run (every other node process then
# ends); --restart goes on from the checkpoint to the KEY of its JSON line (the stencil's checksum,
# LU's residual) of a run without failure, digit for digit, on the same number of nodes and on one
# more. A checkpoint cut short, another program's, or none is refused in one line with exit status 2.
set -u
key=$1 program=$2
shift 2
run="$*"
name=$(basename "$program")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "restart: $*" >&2; exit 1; }
figure() { sed -n "s/.*\"$key\": \([^,}]*\).*/\1/p" "$1"; }

"$program" --nodes 2 $run >"$dir/whole" || fail "the run without failure failed"
expected=$(figure "$dir/whole")
[ -n "$expected" ] || fail "no \"$key\" in: $(cat "$dir/whole")"

"$program" --nodes 2 $run --checkpoint-dir "$dir/ckpt" --checkpoint-every 0.05 >"$dir/killed" 2>&1 &
app=$!
# Killed once the first checkpoint is written (never at the run's first point, where nothing is
# done): the restart then goes on from the middle of the run.
i=0
until [ -e "$dir/ckpt/checkpoint.dps" ]; do
  kill -0 $app 2>/dev/null || fail "the run ended before it was killed"
  [ $i -lt 6000 ] || { kill -KILL $app; fail "no checkpoint in 60 s"; }
  sleep 0.01
  i=$((i + 1))
done
sleep 0.1
kill -KILL $app
wait $app 2>/dev/null
i=0
while pgrep -f "^$program --nodes 2 $run --checkpoint-dir" >/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
pgrep -f "^$program --nodes 2 $run --checkpoint-dir" >/dev/null && fail "node processes outlived node 0 by 5 s"
# Killed while it wrote, it leaves checkpoint.dps.tmp beside the last whole checkpoint: never read.
ls "$dir/ckpt" | grep -qv '^checkpoint.dps\(.tmp\)\?$' && fail "files other than the checkpoint: $(ls "$dir/ckpt")"

for nodes in 2 3; do
  "$program" --nodes $nodes $run --restart "$dir/ckpt" >"$dir/restarted" || fail "--restart on $nodes nodes failed"
  from=$(sed -n 's/.*"restarted_from": \([0-9]*\).*/\1/p' "$dir/restarted")
  [ -n "$from" ] && [ "$from" -gt 0 ] || fail "not restarted from a checkpoint mid-run: '$from'"
  got=$(figure "$dir/restarted")
  [ "$got" = "$expected" ] || fail "on $nodes nodes, restarted_from $from: $key $got, without failure $expected"
  echo "restarted on $nodes nodes from $from (iterations, rounds): $key $got as without failure"
done

refused() {  # refused MESSAGE COMMAND...: one line, exit status 2
  message=$1
  shift
  "$@" >"$dir/out" 2>"$dir/err"
  status=$?
  [ $status -eq 2 ] || fail "'$*' exited $status, not 2"
  [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "$message" "$dir/err" || fail "'$*' said: $(cat "$dir/err")"
}
refused "no checkpoint there" "$program" --nodes 2 $run --restart "$dir/none"
cp -r "$dir/ckpt" "$dir/cut"
truncate -s -1 "$dir/cut/checkpoint.dps"
refused "is damaged" "$program" --nodes 2 $run --restart "$dir/cut"
ln -s "$program" "$dir/other"
refused "the checkpoint there is $name's, not other's" "$dir/other" --nodes 2 $run --restart "$dir/ckpt"
refused "expects a directory" "$program" --nodes 2 $run --restart
echo "restart: refused a missing, a damaged and another program's checkpoint"
