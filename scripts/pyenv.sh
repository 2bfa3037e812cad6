# Sourced by the scripts that drive FerrumKV with redis-py: the virtual
# environment with redis-py 8 (made on first use, in target/pyenv or
# $FERRUM_PYENV), a free loopback port, and a wait until a port accepts.
venv=${FERRUM_PYENV:-target/pyenv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet redis==8.1.0
fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# wait_for_port PORT: up to 5 s for 127.0.0.1:PORT to accept a connection.
wait_for_port() {
  for _ in $(seq 50); do
    "$venv/bin/python" -c "import socket; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
