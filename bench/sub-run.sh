# Sourced by the benchmark scripts (bash, set -euo pipefail): sub_run COMMAND [ARG...] runs a program the
# benchmark takes figures from, its stdout passing through and its stderr kept aside. When it fails,
# one line names the command and its exit status, the end of its stderr follows, and the script stops
# with exit code 2 (from a pipeline or $(...), the subshell stops and set -e stops the script): a
# benchmark never reports a figure it did not get, as bench/peer.hpp's run_lines for the programs.
#
#   line=$(sub_run "$build/apps/stencil/stencil-sim" --model "$model" --pdexec | tail -1)
shopt -s inherit_errexit  # a failure inside $(...) stops the substitution there, not at its last command

sub_run() {
  local err status=0
  err=$(mktemp)
  "$@" 2>"$err" || status=$?
  if ((status != 0)); then
    {
      printf '%s: %s exited with status %d' "${0##*/}" "$*" "$status"
      if [[ -s $err ]]; then
        printf '; its stderr ends:\n'
        tail -n 5 "$err" | sed 's/^/  /'
      else
        printf '\n'
      fi
    } >&2
    rm -f "$err"
    exit 2
  fi
  rm -f "$err"
}
