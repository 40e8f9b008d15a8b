# %preun of rsmap: erasing the package ($1 = 0) stops and disables the service; an upgrade ($1 = 1)
# restarts it in %postun instead. Grants stay in the journal, /var/lib/rsmap.
if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then
    systemctl --no-reload disable --now rsmapd.service >/dev/null 2>&1 || :
fi
exit 0
