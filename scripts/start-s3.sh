#!/usr/bin/env bash
# Starts a throwaway single-node Ceph cluster (one monitor, one memstore OSD, no auth) and a radosgw
# S3 endpoint on loopback, in a scratch folder. Prints shell assignments on stdout:
#   S3_DIR=… S3_ENDPOINT=http://127.0.0.1:PORT AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…
# Stop it with scripts/stop-s3.sh S3_DIR. Needs: ceph-mon ceph-osd radosgw (Debian, Ceph 16).
set -euo pipefail
dir=${1:-$(mktemp -d /tmp/ckpt-s3.XXXXXX)}
mkdir -p "$dir"/{mon,osd,run,log}
# The daemons' chatter goes to a log; on failure its tail is shown.
exec 3>&2 2>>"$dir/log/start.log"
trap 'status=$?; if [ $status -ne 0 ]; then echo "start-s3.sh failed ($status); $dir/log/start.log:" >&3; tail -20 "$dir/log/start.log" >&3; fi' EXIT
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
mon_port=$(free_port)
rgw_port=$(free_port)
fsid=$(cat /proc/sys/kernel/random/uuid)
conf="$dir/ceph.conf"
cat >"$conf" <<CONF
[global]
fsid = $fsid
mon host = 127.0.0.1:$mon_port
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
# Without cephx there is no session key: 'secure' connection mode is impossible, so ask for crc.
ms mon client mode = crc
ms client mode = crc
mon warn on insecure global id reclaim allowed = false
run dir = $dir/run
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
keyring = $dir/keyring
mon data = $dir/mon
osd data = $dir/osd
osd objectstore = memstore
memstore device bytes = 2147483648
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd max object name len = 460
osd max object namespace len = 64
osd memory target = 939524096
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/rgw
rgw dns name = 127.0.0.1
rgw enable usage log = false
rgw thread pool size = 64
# Per-request logging costs more than the request on a loaded test machine.
debug rgw = 0/0
debug ms = 0/0
debug osd = 0/0
debug objecter = 0/0
debug rados = 0/0
debug memstore = 0/0
rgw enable ops log = false
CONF
ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --clobber --fsid "$fsid" --add a "127.0.0.1:$mon_port" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
ceph-mon -c "$conf" -i a
c() { ceph -c "$conf" --connect-timeout 60 "$@"; }
osd_id=$(c osd create)
ceph-osd -c "$conf" -i "$osd_id" --mkfs
ceph-osd -c "$conf" -i "$osd_id"
radosgw -c "$conf" -n client.rgw
access=ckpt$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
up=
for _ in $(seq 1 240); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$rgw_port/" 2>/dev/null; then up=1; break; fi
  sleep 0.5
done
if [ -z "$up" ]; then echo "radosgw did not answer on 127.0.0.1:$rgw_port (see $dir/log)" >&2; exit 1; fi
radosgw-admin -c "$conf" user create --uid ckpt --display-name ckpt --access-key "$access" --secret "$secret" >/dev/null
echo "S3_DIR=$dir"
echo "S3_ENDPOINT=http://127.0.0.1:$rgw_port"
echo "AWS_ACCESS_KEY_ID=$access"
echo "AWS_SECRET_ACCESS_KEY=$secret"
