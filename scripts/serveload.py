"""What scripts/serve-load, scripts/serve-ab and scripts/fork-server-ab share: the photo, the C client, a server
on a free loopback port, and the CPU of a process and its reaped children from /proc."""
import os, signal, socket, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def cpu_seconds(pid, own=False):
    """utime + stime + cutime + cstime of pid (its reaped children included; only its own with `own`), in seconds;
    0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(")") + 2:].split()
    return sum(int(x) for x in fields[11:13 if own else 15]) / TICK

def children(pid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[1]) == pid:
                out.append(int(name))
    return out

def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None

def make_input(folder):
    path = os.path.join(folder, "photo.jpg")
    subprocess.run(["convert", "-size", "1400x1050", "plasma:fractal", "-seed", "1", "-quality", "93", path],
                   check=True)
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N",
                    "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", "-Make=CanaryMake", "-Model=CanaryModel",
                    "-SerialNumber=CANARY-7731", "-DateTimeOriginal=2026:01:02 03:04:05", path], check=True)
    return path

def build_client(folder):
    """scripts/load-client.c, built here: the request loop in C, so the client takes as little as it can of the cores
    it shares with the tool being measured (a Python loop took ~0.6 ms of CPU per request)."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "load-client.c")
    binary = os.path.join(folder, "load-client")
    subprocess.run(["cc", "-O2", "-o", binary, source, "-lpthread"], check=True)
    return binary

def drive(command):
    """Runs the C client; its latencies in ms, failures, elapsed seconds and (exiftool) the tool's CPU seconds."""
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split("\n")
    requests, failures, elapsed, tool_cpu = out[0].split()
    latencies = [float(x) for x in out[1:1 + int(requests)]]
    return latencies, int(failures), float(elapsed), float(tool_cpu)

def summarise(name, concurrency, latencies, failures, elapsed, cpu, server_cpu=None):
    latencies.sort()
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 2) if latencies else None
    n = len(latencies)
    return {"tool": name, "concurrency": concurrency, "requests": n, "failures": failures,
            "rps": round(n / elapsed, 1), "p50_ms": pick(0.5), "p99_ms": pick(0.99),
            "cpu_ms_per_request": round(cpu * 1000 / n, 2) if n else None,
            "server_cpu_ms_per_request": round(server_cpu * 1000 / n, 2) if n and server_cpu is not None else None}

def serve_cpu(server):
    """The server, its fork server (alive: not yet in the server's cutime) and every reaped worker."""
    return cpu_seconds(server.pid) + sum(cpu_seconds(c) for c in children(server.pid))

def run_serve(client, port, server, photo, concurrency, seconds, max_requests):
    before, server_before = serve_cpu(server), cpu_seconds(server.pid, own=True)
    latencies, failures, elapsed, _ = drive([client, "http", str(port), photo, str(concurrency), str(seconds),
                                             str(max_requests)])
    cpu, server_cpu = serve_cpu(server) - before, cpu_seconds(server.pid, own=True) - server_before
    return summarise("metascrub serve", concurrency, latencies, failures, elapsed, cpu, server_cpu)

def run_exiftool(client, photo, concurrency, seconds, max_requests, folder):
    latencies, failures, elapsed, cpu = drive([client, "exiftool", photo, str(concurrency), str(seconds),
                                               str(max_requests), folder])
    return summarise("exiftool -stay_open -all=", concurrency, latencies, failures, elapsed, cpu)

def start_server(binary, spool, workers=None, no_fork_server=False):
    """`metascrub serve` on a free loopback port with its spool in `spool`, once it answers /healthz: (process,
    port). Exits the script if it never does."""
    port = free_port()
    command = [binary, "serve", "--no-config", "--listen", f"127.0.0.1:{port}", "--workers",
               str(workers or os.cpu_count()), "--queue", "64", "--spool", spool]
    server = subprocess.Popen(command + (["--no-fork-server"] if no_fork_server else []), stderr=subprocess.DEVNULL)
    for _ in range(400):
        if subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}/healthz"]).returncode == 0:
            return server, port
        time.sleep(0.05)
    server.kill()
    sys.exit(f"{binary}: the server did not answer /healthz")

def stop_server(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
