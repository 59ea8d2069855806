# Sourced by the bench scripts. client_cpu_until_exit PID: waits for the process PID (a child of
# this shell) to end and sets client_cpu to the CPU seconds it used (user + system, read from /proc
# every 0.2 s while it runs: the last reading before it ended). Not in $(…): the wait must be the
# parent's, or the ended child stays a zombie that kill -0 still finds.
client_cpu_until_exit() {
  local pid=$1 ticks=0
  while kill -0 "$pid" 2>/dev/null; do
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "$ticks")
    sleep 0.2
  done
  wait "$pid" || true
  client_cpu=$(echo "$ticks / $(getconf CLK_TCK)" | bc -l)
}
