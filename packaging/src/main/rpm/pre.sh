# %pre of rsmap: the socket's group, before the files (rsmap-hook is root:rsmap 2755) are laid down.
getent group rsmap >/dev/null || groupadd -r rsmap
exit 0
