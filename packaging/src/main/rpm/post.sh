# %post of rsmap: nothing is enabled or started (rsmapd needs the cluster's complex table first).
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || :
fi
exit 0
