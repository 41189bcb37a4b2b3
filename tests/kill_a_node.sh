#!/bin/sh
# kill_a_node.sh CPU_SECONDS NODE COMMAND...: runs COMMAND (a DPS application over node processes),
# SIGKILLs the process of node NODE (its NODE-th child, by start order) once that process, connected
# to every other node, has used CPU_SECONDS more of CPU (its progress, whatever the machine's speed
# and however long its start took), and ends as COMMAND does.
# COMMAND ending first is a failure: the kill was meant to hit it mid-run.
set -u
cpu=$1 node=$2
shift 2
"$@" &
app=$!
ticks=$(awk -v s="$cpu" -v hz="$(getconf CLK_TCK)" 'BEGIN { print int(s * hz + 0.5) }')
used() { awk '{ print $14 + $15 }' /proc/$1/stat 2>/dev/null || echo 0; }
victim="" start=""
i=0
while [ $i -lt 6000 ]; do  # 60 s at most
  kill -0 $app 2>/dev/null || { echo "kill_a_node: the application ended before node $node used ${cpu} s of CPU" >&2; wait $app; exit 125; }
  [ -z "$victim" ] && victim=$(pgrep -P $app | sort -n | sed -n "${node}p")
  if [ -n "$victim" ] && [ -z "$start" ]; then  # a member: a socket to listen, one to each other node
    nodes=$(($(pgrep -P $app | wc -l) + 1))
    [ "$(ls -l /proc/$victim/fd 2>/dev/null | grep -c socket)" -ge "$nodes" ] && start=$(used $victim)
  fi
  if [ -n "$start" ] && [ "$(used $victim)" -ge $((start + ticks)) ]; then
    at=$(used $victim)
    kill -KILL $victim && echo "kill_a_node: killed node $node (pid $victim) after $at ticks of CPU, $start of them before it joined" >&2
    wait $app
    exit $?
  fi
  sleep 0.01
  i=$((i + 1))
done
echo "kill_a_node: node $node never used ${cpu} s of CPU in 60 s" >&2
kill -KILL $app
exit 125
