#!/usr/bin/env bash
# Start the Docker engine when it is not running: through systemd where it runs, else dockerd in
# the background (logging to /var/log/twin-dockerd.log). Waits until the engine answers.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  exit 0
fi
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl start docker
else
  echo "starting dockerd (log: /var/log/twin-dockerd.log)"
  nohup dockerd >/var/log/twin-dockerd.log 2>&1 </dev/null &
fi
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "the Docker engine did not start in 30 s; see /var/log/twin-dockerd.log" >&2
exit 1
