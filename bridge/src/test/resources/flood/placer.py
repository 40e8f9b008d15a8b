# PLACE back to back: N connections to the authority's socket, each INIT then PLACE until STOP exists;
# the counts of OK and ERROR answers go to OUT. Run as the flooding user (AuthorityFloodIT, bench PlaceFlood).
import os, socket, sys, threading
path, n, stop, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
init, place = open(sys.argv[5], 'rb').read(), open(sys.argv[6], 'rb').read()
counts = {'ok': 0, 'error': 0}
def frame(s):
    head = b''
    while len(head) < 8:
        b = s.recv(8 - len(head))
        if not b: raise EOFError
        head += b
    body, need = b'', int(head, 16)
    while len(body) < need:
        b = s.recv(need - len(body))
        if not b: raise EOFError
        body += b
    return int(body[8:12], 16)
def until_done(s):
    while True:
        code = frame(s)
        if code in (0x8000, 0x8001): return code
def run():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(init); until_done(s)
    while not os.path.exists(stop):
        s.sendall(place)
        counts['ok' if until_done(s) == 0x8000 else 'error'] += 1
ts = [threading.Thread(target=run) for _ in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
open(out, 'w').write('ok=%d error=%d\n' % (counts['ok'], counts['error']))
