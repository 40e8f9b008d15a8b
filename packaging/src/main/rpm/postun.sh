# %postun of rsmap: an upgrade restarts a running rsmapd on the new program. An erase keeps the journal
# (/var/lib/rsmap) and a changed /etc/rsmap/rsmapd.conf (as rsmapd.conf.rpmsave): RPM has no purge, so
# they stay, as does the rsmap group. An erase removes the jobs' CDI specs in the default cdi_dir: no
# rsmapd is left to remove a job's spec at its end (a later start rewrites those its journal holds).
if [ "$1" -eq 0 ]; then
    rm -f /run/cdi/rsmapd-job-*.json /run/cdi/.rsmapd-job-*.tmp
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || :
    if [ "$1" -ge 1 ]; then
        systemctl try-restart rsmapd.service >/dev/null 2>&1 || :
    fi
fi
exit 0
