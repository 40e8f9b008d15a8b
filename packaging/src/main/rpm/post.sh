# %post of rsmap: nothing is enabled or started (rsmapd needs the cluster's complex table first). The
# class-data-sharing archive of this jar and this JVM (a third off rsmapd's start-up; without it rsmapd
# only starts slower).
/usr/sbin/rsmapd --train-cds >/dev/null 2>&1 || rm -f /var/cache/rsmap/rsmapd.jsa
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || :
fi
exit 0
