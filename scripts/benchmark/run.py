#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Times metascrub against its peers and against `cp` on the data make_data.py generated.

  run.py CACHE_DIR SCALE METASCRUB_BINARY MARKDOWN_OUT

Every tool runs on the same files, with a warm page cache (everything is read once first), each on a
fresh output folder or fresh copies when it edits in place; outputs are synced and deleted between runs
(untimed) so one tool's write-back does not land in the next tool's time. Peak RSS comes from GNU time
(`/usr/bin/time`, the %M field that `-v` prints as "Maximum resident set size").
"""
import datetime, glob, json, os, platform, resource, shutil, subprocess, sys, tempfile, time

CACHE, SCALE, MS, MD_OUT = sys.argv[1:5]
ONLY = os.environ.get("BENCH_ONLY", "")  # "heic-convert": just that case (scripts/bench --heic-convert)
DATA = os.path.join(CACHE, SCALE)
WORK = os.path.join(CACHE, "run")
HERE = os.path.dirname(os.path.abspath(__file__))
REPEAT = 20          # per-invocation timings (one file as its own process, --version)
CONVERT_REPEAT = 5   # HEIC -> JPEG conversions (issue 16)
MAT2_SUBSET = {"jpeg": 50, "png": 20, "heic": 10}
EXIFTOOL_SCAN_SUBSET = 200
EXIFTOOL_CLEAN_SUBSET = {"png": 50}


class Result:
    def __init__(self, group, tool, files, wall, rss_mb, rc, note="", cpu=None):
        self.group, self.tool, self.files, self.wall, self.rss_mb, self.rc, self.note = group, tool, files, wall, rss_mb, rc, note
        self.cpu = cpu  # user + system CPU seconds (GNU time): what a loaded machine does not inflate

    def as_dict(self):
        return dict(group=self.group, tool=self.tool, files=self.files, wall=self.wall, rss_mb=self.rss_mb,
                    rc=self.rc, note=self.note, cpu=self.cpu)


RESULTS = []
LAST_CPU = [None]  # CPU seconds of the last `timed` command


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def timed(cmd, cwd=None, ok=(0,)):
    """Runs cmd under GNU time; returns (wall seconds, peak RSS MB, exit status, stderr tail)."""
    fd, rss_file = tempfile.mkstemp(prefix="bench-rss-")
    os.close(fd)
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Microsecond rusage of the command and everything it waited for (GNU time's %U/%S round to 10 ms).
    LAST_CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        rss_kb = int(open(rss_file).read().strip().splitlines()[-1])
    except (ValueError, IndexError):
        rss_kb = 0
    os.unlink(rss_file)
    err = p.stderr.decode(errors="replace").strip().splitlines()
    tail = err[-1][:160] if err else ""
    if p.returncode not in ok:
        log("  %s exited %d: %s" % (cmd[0], p.returncode, tail))
    return wall, rss_kb / 1024, p.returncode, tail


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["sync"])
    os.makedirs(path, exist_ok=True)
    return path


def warm(paths):
    """Reads every input once so all tools start with the same (warm) page cache."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 22):
                pass


def add(group, tool, files, wall, rss, rc, note="", cpu=-1.0):
    cpu = LAST_CPU[0] if cpu == -1.0 else cpu
    RESULTS.append(Result(group, tool, files, wall, rss, rc, note, cpu))
    log("  %-30s %-34s %8.3f s  %s CPU  %7.1f MB%s" % (group, tool, wall, "%.3f s" % cpu if cpu is not None else "-",
                                                       rss, ("  [" + note + "]") if note else ""))


def copy_tree(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    subprocess.run(["sync"])
    return sorted(glob.glob(os.path.join(dst, "*")))


def exiftool_durable(group, src, n):
    """exiftool -all= followed by sync: the same durability metascrub gives its outputs, so the two compare like
    for like (exiftool alone leaves its output to write-back, which on the full set is most of the work)."""
    out = fresh(os.path.join(WORK, "out"))
    script = 'exiftool -q -q -m -all= -o "$1/" "$0"; s=$?; sync; exit $s'
    wall, rss, rc, tail = timed(["sh", "-c", script, src, os.path.join(out, "etd")], ok=(0, 1))
    add(group, "exiftool -all= + sync (durable)", n, wall, rss, rc, "" if rc in (0, 1) else "exit %d: %s" % (rc, tail))


def batch_clean(kind, ext):
    src = os.path.join(DATA, kind)
    files = sorted(glob.glob(os.path.join(src, "*." + ext)))
    n = len(files)
    group = "%s clean (%d files)" % (kind.upper(), n)
    log(group)
    warm(files)
    out = fresh(os.path.join(WORK, "out"))
    # Durable against durable: metascrub's outputs are on disk before it reports them cleaned.
    wall, rss, rc, _ = timed(["sh", "-c", 'cp -r "$0" "$1" && sync', src, os.path.join(out, "cp")])
    add(group, "cp -r + sync (floor)", n, wall, rss, rc)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed([MS, "clean", src, "--output-dir", os.path.join(out, "ms"), "--quiet"])
    cleaned = len(glob.glob(os.path.join(out, "ms", "*." + ext)))
    add(group, "metascrub clean --output-dir", n, wall, rss, rc,
        "" if rc == 0 and cleaned == n else "exit %d, %d/%d written: %s" % (rc, cleaned, n, tail))
    out = fresh(os.path.join(WORK, "out"))
    # exiftool rewrites PNGs slowly (~1.4 s per 3.5 MB file here): a subset, hard-linked, extrapolated.
    subset = min(n, EXIFTOOL_CLEAN_SUBSET.get(kind, n))
    et_src = src
    if subset < n:
        et_src = fresh(os.path.join(WORK, "et-subset"))
        for path in files[:subset]:
            os.link(path, os.path.join(et_src, os.path.basename(path)))
    wall, rss, rc, tail = timed(["exiftool", "-q", "-q", "-m", "-all=", "-o", os.path.join(out, "et") + "/", et_src],
                                ok=(0, 1))
    note = "" if subset == n else "timed on %d files, x%d extrapolated" % (subset, n // subset)
    add(group, "exiftool -all= (one process)", n, wall * n / subset, rss, rc,
        note if rc == 0 else (note + "; " if note else "") + "exit %d: %s" % (rc, tail))
    shutil.rmtree(os.path.join(WORK, "et-subset"), ignore_errors=True)
    if kind == "jpeg":
        exiftool_durable(group, src, n)
    copies = copy_tree(src, os.path.join(WORK, "copies"))
    wall, rss, rc, tail = timed(["exiv2", "rm"] + copies, ok=(0, 1, 253))
    add(group, "exiv2 rm (one process, copies)", n, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    subset = MAT2_SUBSET[kind]
    copies = copy_tree(src, os.path.join(WORK, "copies"))[:subset]
    wall, rss, rc, tail = timed(["mat2", "--inplace"] + copies, ok=(0, 1))
    note = "timed on %d files, x%d extrapolated" % (len(copies), n // len(copies))
    add(group, "mat2 --inplace (copies)", n, wall * n / len(copies), rss, rc,
        note if rc == 0 else note + "; exit %d: %s" % (rc, tail))
    shutil.rmtree(os.path.join(WORK, "copies"), ignore_errors=True)
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)
    return files


def rotated_vs_upright():
    """Portrait phone photos (Orientation 6) against the same photos upright: the price of deciding whether
    the orientation can be baked exactly (issue 14: at most 2x)."""
    for name in ("portrait-upright", "portrait-rotated"):
        src = os.path.join(DATA, name)
        files = sorted(glob.glob(os.path.join(src, "*.jpg")))
        group = "JPEG portraits, %s (%d files)" % (name.split("-")[1], len(files))
        log(group)
        warm(files)
        out = fresh(os.path.join(WORK, "out"))
        wall, rss, rc, tail = timed([MS, "clean", src, "--output-dir", os.path.join(out, "ms"), "--quiet"])
        add(group, "metascrub clean --output-dir", len(files), wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)


def median_of(cmd, times=5, ok=(0,), before=None):
    """Median wall time (and the largest peak RSS) of `times` runs of cmd, each its own process."""
    walls, rsses, rcs, cpus = [], [], [], []
    for _ in range(times):
        if before:
            before()
        wall, rss, rc, _ = timed(cmd, ok=ok)
        walls.append(wall); rsses.append(rss); rcs.append(rc); cpus.append(LAST_CPU[0] or 0.0)
    walls.sort(); cpus.sort()
    LAST_CPU[0] = cpus[len(cpus) // 2]
    bad = [rc for rc in rcs if rc not in ok]
    return walls[len(walls) // 2], max(rsses), bad[0] if bad else rcs[0]


def flat_rotated():
    """Issue 25: a 12 MP night shot with a flat top two thirds, once per orientation, each file its own
    process (median of 5), clean and scan; and the 16000x16000 decompression bomb."""
    folder = os.path.join(CACHE, "base", "flat")
    out = fresh(os.path.join(WORK, "out"))
    target = os.path.join(out, "x.jpg")
    rm = lambda: os.path.exists(target) and os.unlink(target)
    group = "flat 12 MP night photo, one process"
    log(group)
    for o in range(1, 9):
        src = os.path.join(folder, "night-%d.jpg" % o)
        warm([src])
        wall, rss, rc = median_of([MS, "clean", src, "--output", target, "--quiet"], before=rm)
        add(group, "metascrub clean, orientation %d" % o, 1, wall, rss, rc)
        wall, rss, rc = median_of([MS, "scan", src, "--quiet"], ok=(0, 1))
        add(group, "metascrub scan, orientation %d" % o, 1, wall, rss, rc if rc != 1 else 0)
    bomb = os.path.join(folder, "bomb-16000.jpg")
    group = "16000x16000 flat JPEG, Orientation 6 (%.1f MB)" % (os.path.getsize(bomb) / 1e6)
    log(group)
    warm([bomb])
    wall, rss, rc = median_of([MS, "scan", bomb, "--quiet"], times=3, ok=(0, 1))
    add(group, "metascrub scan", 1, wall, rss, rc if rc != 1 else 0)
    wall, rss, rc = median_of([MS, "clean", bomb, "--output", target, "--quiet"], times=3, before=rm)
    add(group, "metascrub clean --output", 1, wall, rss, rc)
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)


def mix(jpegs):
    """The realistic batch: the JPEG set's photos with 40% portrait phone photos (Orientation 6) among them."""
    rotated = sorted(glob.glob(os.path.join(DATA, "portrait-rotated", "*.jpg")))
    n_rot = min(len(rotated), len(jpegs) * 2 // 5)
    n_up = min(len(jpegs), n_rot * 3 // 2)
    src = fresh(os.path.join(WORK, "mix"))
    for i, path in enumerate(jpegs[:n_up] + rotated[:n_rot]):
        os.link(path, os.path.join(src, "%05d.jpg" % i))
    n = n_up + n_rot
    group = "JPEG mix, 40%% rotated (%d files)" % n
    log(group)
    files = sorted(glob.glob(os.path.join(src, "*.jpg")))
    warm(files)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, _ = timed(["sh", "-c", 'cp -r "$0" "$1" && sync', src, os.path.join(out, "cp")])
    add(group, "cp -r + sync (floor)", n, wall, rss, rc)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed([MS, "clean", src, "--output-dir", os.path.join(out, "ms"), "--quiet"])
    add(group, "metascrub clean --output-dir", n, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed(["exiftool", "-q", "-q", "-m", "-all=", "-o", os.path.join(out, "et") + "/", src], ok=(0, 1))
    add(group, "exiftool -all= (one process)", n, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    exiftool_durable(group, src, n)
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)


def linearity(jpegs):
    """metascrub clean on a tenth of the JPEGs; the full set's time is the batch row above."""
    tenth = fresh(os.path.join(WORK, "tenth"))
    for path in jpegs[:max(1, len(jpegs) // 10)]:
        os.link(path, os.path.join(tenth, os.path.basename(path)))
    out = fresh(os.path.join(WORK, "out"))
    n = len(os.listdir(tenth))
    wall, rss, rc, tail = timed([MS, "clean", tenth, "--output-dir", os.path.join(out, "ms"), "--quiet"])
    add("JPEG clean, a tenth (%d files)" % n, "metascrub clean --output-dir", n, wall, rss, rc, "" if rc == 0 else tail)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, _ = timed([MS, "scan", tenth, "--quiet"], ok=(0, 1))
    add("JPEG scan, a tenth (%d files)" % n, "metascrub scan", n, wall, rss, rc)
    shutil.rmtree(tenth, ignore_errors=True)


def scan(jpegs):
    src = os.path.join(DATA, "jpeg")
    n = len(jpegs)
    group = "JPEG scan (%d files)" % n
    log(group)
    warm(jpegs)
    wall, rss, rc, tail = timed([MS, "scan", src, "--quiet"], ok=(0, 1))
    add(group, "metascrub scan", n, wall, rss, rc, "" if rc in (0, 1) else tail)
    wall, rss, rc, tail = timed(["sh", "-c", 'cat "$0"/* > /dev/null', src])
    add(group, "cat DIR/* > /dev/null (read floor)", n, wall, rss, rc)
    wall, rss, rc, tail = timed([MS, "scan", src, "--json"], ok=(0, 1))
    add(group, "metascrub scan --json", n, wall, rss, rc, "" if rc in (0, 1) else tail)
    subset = jpegs[:min(n, EXIFTOOL_SCAN_SUBSET)]
    wall, rss, rc, tail = timed(["exiftool", "-j", "-G1", "-a"] + subset, ok=(0, 1))
    note = "" if len(subset) == n else "timed on %d files, x%d extrapolated" % (len(subset), n // len(subset))
    add(group, "exiftool -j -G1 -a", n, wall * n / len(subset), rss, rc, note)


def per_invocation(jpegs):
    one = jpegs[0]
    group = "one file, own process (mean of %d)" % REPEAT
    log(group)
    out = fresh(os.path.join(WORK, "out"))
    target = os.path.join(out, "x.jpg")

    def mean(cmd_for, before=None, ok=(0,)):
        walls, rsss, rcs = [], [], set()
        for _ in range(REPEAT):
            if before:
                before()
            wall, rss, rc, _ = timed(cmd_for(), ok=ok)
            walls.append(wall); rsss.append(rss); rcs.add(rc)
        return sum(walls) / len(walls), max(rsss), max(rcs)

    rm = lambda: os.path.exists(target) and os.unlink(target)
    wall, rss, rc = mean(lambda: [MS, "clean", one, "--output", target, "--quiet"], rm)
    add(group, "metascrub clean one.jpg --output", 1, wall, rss, rc)
    wall, rss, rc = mean(lambda: ["exiftool", "-q", "-q", "-m", "-all=", "-o", target, one], rm)
    add(group, "exiftool -all= -o one.jpg", 1, wall, rss, rc)
    wall, rss, rc = mean(lambda: ["exiv2", "rm", target], lambda: shutil.copyfile(one, target))
    add(group, "exiv2 rm one.jpg (a copy)", 1, wall, rss, rc)
    wall, rss, rc = mean(lambda: [MS, "--version"])
    add(group, "metascrub --version", 0, wall, rss, rc)
    wall, rss, rc = mean(lambda: ["exiftool", "-ver"])
    add(group, "exiftool -ver", 0, wall, rss, rc)


def precommit(jpegs):
    """20 photos staged in a fresh git repository; `metascrub scan --staged` is what the hook runs."""
    group = "pre-commit: 20 staged photos (mean of 5)"
    log(group)
    repo = fresh(os.path.join(WORK, "repo"))
    git = ["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(git + ["init", "-q"], check=True)
    for path in jpegs[:20]:
        shutil.copyfile(path, os.path.join(repo, os.path.basename(path)))
    subprocess.run(git + ["add", "."], check=True)
    walls, rss, rcs = [], 0.0, set()
    for _ in range(5):
        wall, r, rc, tail = timed([MS, "scan", "--staged", "--quiet"], cwd=repo, ok=(0, 1))
        walls.append(wall); rss = max(rss, r); rcs.add(rc)
    add(group, "metascrub scan --staged", 20, sum(walls) / len(walls), rss, max(rcs),
        "" if rcs <= {0, 1} else "exit %s: %s" % (sorted(rcs), tail))
    walls = []
    staged = [os.path.basename(p) for p in jpegs[:20]]
    for _ in range(5):
        wall, r, rc, _ = timed(["exiftool", "-q", "-q", "-if", "$GPSLatitude or $SerialNumber", "-p", "$FileName"] + staged,
                               cwd=repo, ok=(0, 1, 2))
        walls.append(wall)
    add(group, "exiftool -if GPS/serial (same files)", 20, sum(walls) / len(walls), r, 0)
    shutil.rmtree(repo, ignore_errors=True)


def mp4():
    big = os.path.join(DATA, "mp4", "big.mp4")
    small = os.path.join(DATA, "mp4", "small.mp4")
    mb = os.path.getsize(big) / 1e6
    group = "MP4 clean (%.0f MB)" % mb
    log(group)
    warm([big, small])
    out = fresh(os.path.join(WORK, "out"))
    target = os.path.join(out, "x.mp4")
    wall, rss, rc, _ = timed(["sh", "-c", 'cp "$0" "$1" && sync', big, target])
    add(group, "cp + sync (floor)", 1, wall, rss, rc)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed([MS, "clean", big, "--output", target, "--quiet"])
    add(group, "metascrub clean --output", 1, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", big, "-map", "0", "-c", "copy",
                                 "-map_metadata", "-1", target])
    add(group, "ffmpeg -map_metadata -1 -c copy", 1, wall, rss, rc, "" if rc == 0 else tail)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed(["exiftool", "-q", "-q", "-m", "-all=", "-o", target, big], ok=(0, 1))
    add(group, "exiftool -all= -o", 1, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    small_mb = os.path.getsize(small) / 1e6
    group2 = "MP4 clean (%.0f MB, memory check)" % small_mb
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, _ = timed(["cp", small, target])
    add(group2, "cp (floor)", 1, wall, rss, rc)
    out = fresh(os.path.join(WORK, "out"))
    wall, rss, rc, tail = timed([MS, "clean", small, "--output", target, "--quiet"])
    add(group2, "metascrub clean --output", 1, wall, rss, rc, "" if rc == 0 else "exit %d: %s" % (rc, tail))
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)


def heic_convert():
    """Issue 16: one 12 MP HEIC (make_data's base.heic, heif-enc/x265) converted to JPEG as its own process,
    the best of CONVERT_REPEAT runs, beside heif-convert (libheif decode + libjpeg encode, no verification) and
    cjpeg encoding the same image from a PPM (the encode alone). Peak RSS is set against the image's decoded
    size (width x height x 3 bytes) over a small conversion's RSS (the process baseline)."""
    heic = os.path.join(CACHE, "base", "base.heic")
    group = "HEIC -> JPEG, 12 MP (best of %d)" % CONVERT_REPEAT
    log(group)
    warm([heic])
    out = fresh(os.path.join(WORK, "out"))
    target = os.path.join(out, "x.jpg")

    def best(cmd, ok=(0,)):
        runs = []
        for _ in range(CONVERT_REPEAT):
            if os.path.exists(target):
                os.unlink(target)
            runs.append(timed(cmd, ok=ok))
        wall = min(r[0] for r in runs)
        return wall, max(r[1] for r in runs), max(r[2] for r in runs), runs[-1][3]

    wall, rss, rc, tail = best([MS, "clean", "--convert", "jpeg", heic, "--output", target, "--quiet"])
    add(group, "metascrub clean --convert jpeg", 1, wall, rss, rc, "" if rc == 0 else tail)
    wall, rss, rc, tail = best(["heif-convert", "-q", "92", heic, target])
    add(group, "heif-convert -q 92", 1, wall, rss, rc, "" if rc == 0 else tail)
    ppm = os.path.join(out, "x.ppm")
    subprocess.run(["heif-convert", heic, os.path.join(out, "x.png")], stdout=subprocess.DEVNULL, check=True)
    subprocess.run(["convert", os.path.join(out, "x.png"), ppm], check=True)
    wall, rss, rc, tail = best(["cjpeg", "-quality", "92", "-outfile", target, ppm])
    add(group, "cjpeg -quality 92 (encode alone)", 1, wall, rss, rc, "" if rc == 0 else tail)
    # The process baseline: the same command on a 64x48 HEIC.
    small_png, small = os.path.join(out, "small.png"), os.path.join(out, "small.heic")
    subprocess.run(["convert", "-size", "64x48", "plasma:", small_png], check=True)
    subprocess.run(["heif-enc", "-q", "50", "-o", small, small_png], stdout=subprocess.DEVNULL, check=True)
    wall, rss, rc, tail = best([MS, "clean", "--convert", "jpeg", small, "--output", target, "--quiet"])
    size = subprocess.run(["identify", "-format", "%w %h", heic], capture_output=True, text=True).stdout.split()
    add(group, "metascrub, 64x48 HEIC (baseline)", 1, wall, rss, rc,
        "decoded 12 MP image: %.1f MB" % (int(size[0]) * int(size[1]) * 3 / 1048576.0) if len(size) == 2 else "")
    shutil.rmtree(out, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- report

def first_line(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (p.stdout or p.stderr).strip().splitlines()[0]
    except Exception as e:  # a missing tool is reported, not fatal
        return "unavailable (%s)" % e.__class__.__name__


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
    fs = subprocess.run(["df", "-T", DATA if os.path.exists(DATA) else CACHE], capture_output=True, text=True).stdout.splitlines()[-1].split()[1]
    flags = open("/proc/cpuinfo").read()
    return {
        "nproc": str(os.cpu_count()), "cpu": cpu + (" (SHA-NI)" if " sha_ni" in flags else ""),
        "ram": "%.1f GiB" % (int(mem) / 1024 / 1024), "kernel": platform.release(), "filesystem": fs,
        "swift": first_line(["swift", "--version"]), "metascrub": first_line([MS, "--version"]),
        "exiftool": first_line(["exiftool", "-ver"]), "exiv2": first_line(["exiv2", "--version"]),
        "mat2": first_line(["mat2", "--version"]), "ffmpeg": first_line(["ffmpeg", "-version"]),
        "cp": first_line(["cp", "--version"]),
    }


def find(group_prefix, tool_prefix):
    for r in RESULTS:
        if r.group.startswith(group_prefix) and r.tool.startswith(tool_prefix):
            return r
    return None


def succeeded(r):
    """Exit 1 means findings for a scan and minor warnings for exiftool; for the rest it is a failure."""
    return r.rc == 0 or (r.rc == 1 and (r.tool.startswith("metascrub scan") or r.tool.startswith("exiftool")))


def rate(x):
    return "%.0f" % x if x >= 10 else "%.2f" % x


def table():
    rows = []
    header = ["benchmark", "tool", "files", "wall s", "CPU s", "files/s", "x cp", "x metascrub", "peak RSS MB", "note"]
    for r in RESULTS:
        floor = next((x for x in RESULTS if x.group == r.group and x.tool.startswith("cp")), None)
        ms = next((x for x in RESULTS if x.group == r.group and x.tool.startswith("metascrub") and x is not r), None)
        if r.tool.startswith("metascrub"):
            ms = None
        rows.append([r.group, r.tool, str(r.files) if r.files else "-", "%.3f" % r.wall,
                     "%.3f" % r.cpu if r.cpu is not None else "-",
                     rate(r.files / r.wall) if r.files and r.wall > 0 else "-",
                     "%.2f" % (r.wall / floor.wall) if floor and floor.wall > 0 and succeeded(r) else "-",
                     "%.2f" % (r.wall / ms.wall) if ms and ms.wall > 0 and succeeded(r) else "-",
                     "%.1f" % r.rss_mb, r.note])
    return header, rows


def cpu_of(ms, other):
    """The CPU times beside a wall-time ratio: what a loaded machine does not inflate."""
    if ms.cpu is None or other.cpu is None:
        return ""
    return "; CPU %.3f s vs %.3f s" % (ms.cpu, other.cpu)


def targets():
    """The issue's targets, each with the measured figure; None when the figure is missing."""
    out = []

    def target(name, ok, figure):
        out.append((name, "met" if ok else "MISSED", figure))

    for prefix, name in (("JPEG clean (", "JPEG batch"), ("JPEG mix", "JPEG mix, 40% rotated,"),
                         ("PNG clean (", "PNG batch"), ("HEIC clean (", "HEIC batch")):
        cp = find(prefix, "cp"); ms = find(prefix, "metascrub"); et = find(prefix, "exiftool")
        limit = 1.5 if prefix.startswith("JPEG") else 2.0
        if cp and ms:
            target("%s clean <= %.1fx cp -r + sync" % (name, limit), ms.wall <= limit * cp.wall and ms.rc == 0,
                   "%.2fx (%.2f s vs %.2f s)%s" % (ms.wall / cp.wall, ms.wall, cp.wall, cpu_of(ms, cp)))
        if et and ms and prefix.startswith("JPEG"):
            target("%s clean >= 3x faster than exiftool -all=" % name, et.wall >= 3 * ms.wall and ms.rc == 0,
                   "%.1fx (%.2f s vs %.2f s)%s" % (et.wall / ms.wall, ms.wall, et.wall, cpu_of(ms, et)))
        etd = find(prefix, "exiftool -all= + sync")
        if etd and ms:
            target("%s clean >= 3x faster than exiftool -all= + sync (durable against durable)" % name,
                   etd.wall >= 3 * ms.wall and ms.rc == 0, "%.1fx (%.2f s vs %.2f s)" % (etd.wall / ms.wall, ms.wall, etd.wall))
    up = find("JPEG portraits, upright", "metascrub"); rot = find("JPEG portraits, rotated", "metascrub")
    if up and rot:
        target("rotated photo <= 2x an upright one (clean)", rot.wall <= 2 * up.wall and rot.rc == 0 and up.rc == 0,
               "%.2fx (%.2f s vs %.2f s for %d files)" % (rot.wall / up.wall, rot.wall, up.wall, rot.files))
        if rot.cpu and up.cpu:
            target("rotated photo <= 2x an upright one (clean, CPU time)", rot.cpu <= 2 * up.cpu and rot.rc == 0 and up.rc == 0,
                   "%.2fx (%.3f s vs %.3f s CPU)" % (rot.cpu / up.cpu, rot.cpu, up.cpu))
    one = find("one file", "metascrub clean")
    if one:
        target("one file as its own process < 20 ms", one.wall < 0.020 and one.rc == 0, "%.1f ms" % (one.wall * 1000))
    s = find("JPEG scan (", "metascrub scan"); e = find("JPEG scan (", "exiftool")
    if s and e:
        target("scan >= 30x exiftool -j -G1 -a", e.wall / s.wall >= 30, "%.1fx (%.0f vs %.0f files/s)" %
               (e.wall / s.wall, s.files / s.wall, e.files / e.wall))
    sj = find("JPEG scan (", "metascrub scan --json"); cat = find("JPEG scan (", "cat")
    if sj and cat:
        target("scan --json DIR <= 3x cat DIR/*", sj.wall <= 3 * cat.wall and sj.rc in (0, 1),
               "%.2fx (%.3f s vs %.3f s)" % (sj.wall / cat.wall, sj.wall, cat.wall))
    for verb in ("clean", "scan"):
        up = find("flat 12 MP night photo", "metascrub %s, orientation 1" % verb)
        turned = [find("flat 12 MP night photo", "metascrub %s, orientation %d" % (verb, o)) for o in range(2, 9)]
        if up and all(turned):
            worst = max(turned, key=lambda r: r.wall)
            target("flat rotated 12 MP photo <= 2x upright (%s, every orientation)" % verb,
                   worst.wall <= 2 * up.wall and all(r.rc == 0 for r in turned + [up]),
                   "worst %.2fx (%s: %.1f ms vs %.1f ms upright)" % (worst.wall / up.wall, worst.tool.split(", ")[1],
                                                                     worst.wall * 1000, up.wall * 1000))
            if up.cpu and all(r.cpu for r in turned):
                worst = max(turned, key=lambda r: r.cpu)
                target("flat rotated 12 MP photo <= 2x upright (%s, CPU time)" % verb,
                       worst.cpu <= 2 * up.cpu and all(r.rc == 0 for r in turned + [up]),
                       "worst %.2fx (%s: %.1f ms vs %.1f ms CPU upright)" % (worst.cpu / up.cpu, worst.tool.split(", ")[1],
                                                                             worst.cpu * 1000, up.cpu * 1000))
    for verb in ("scan", "clean"):
        b = find("16000x16000", "metascrub %s" % verb)
        if b:
            target("16000x16000 bomb %s < 0.5 s and < 64 MB (was 9-10 s, 1.5 GB)" % verb, b.wall < 0.5 and b.rss_mb < 64 and b.rc == 0,
                   "%.1f ms, %.1f MB peak RSS" % (b.wall * 1000, b.rss_mb))
    cp = find("MP4 clean (", "cp"); ms = find("MP4 clean (", "metascrub")
    if cp and ms and "memory" not in ms.group:
        target("MP4 clean <= 1.3x cp + sync", ms.wall <= 1.3 * cp.wall and ms.rc == 0,
               "%.2fx (%.2f s vs %.2f s)%s" % (ms.wall / cp.wall, ms.wall, cp.wall, cpu_of(ms, cp)))
        target("MP4 clean peak RSS < 64 MB", ms.rss_mb < 64 and ms.rc == 0, "%.1f MB" % ms.rss_mb)
        small = next((r for r in RESULTS if "memory" in r.group and r.tool.startswith("metascrub")), None)
        if small:
            target("MP4 peak RSS flat in file size", ms.rss_mb <= small.rss_mb * 1.25 + 4 and ms.rc == 0 and small.rc == 0,
                   "%.1f MB for %s vs %.1f MB for %s" % (ms.rss_mb, ms.group[11:-1], small.rss_mb, small.group[11:].split(",")[0]))
    pc = find("pre-commit", "metascrub")
    if pc:
        target("pre-commit check of 20 staged photos < 0.3 s", pc.wall < 0.3 and pc.rc in (0, 1), "%.3f s" % pc.wall)
    v = find("one file", "metascrub --version")
    if v:
        target("metascrub --version < 10 ms", v.wall < 0.010, "%.1f ms" % (v.wall * 1000))
    conv = find("HEIC -> JPEG", "metascrub clean"); hc = find("HEIC -> JPEG", "heif-convert")
    cj = find("HEIC -> JPEG", "cjpeg"); small = find("HEIC -> JPEG", "metascrub, 64x48")
    if conv:
        beside = "; heif-convert %.3f s + cjpeg %.3f s" % (hc.wall, cj.wall) if hc and cj else ""
        target("HEIC -> JPEG, 12 MP, < 0.5 s", conv.wall < 0.5 and conv.rc == 0, "%.3f s%s" % (conv.wall, beside))
        if small and small.note.startswith("decoded 12 MP image: "):
            image_mb = float(small.note.split(": ")[1].split()[0])
            extra = conv.rss_mb - small.rss_mb
            target("HEIC -> JPEG peak RSS <= one decoded image", extra <= image_mb and conv.rc == 0,
                   "%.1f MB over the baseline = %.2f decoded images (%.1f MB peak; heif-convert %.1f MB)" %
                   (extra, extra / image_mb, conv.rss_mb, hc.rss_mb if hc else 0))
    full = find("JPEG clean (", "metascrub"); tenth = find("JPEG clean, a tenth", "metascrub")
    if full and tenth:
        ratio = full.wall / tenth.wall
        target("10x the files, <= 10.5x the time (clean)", ratio <= 10.5 * full.files / tenth.files / 10,
               "%.1fx the time for %.0fx the files (%.2f s / %.2f s)" % (ratio, full.files / tenth.files, full.wall, tenth.wall))
    full = find("JPEG scan (", "metascrub scan"); tenth = find("JPEG scan, a tenth", "metascrub")
    if full and tenth:
        ratio = full.wall / tenth.wall
        target("10x the files, <= 10.5x the time (scan)", ratio <= 10.5 * full.files / tenth.files / 10,
               "%.1fx the time for %.0fx the files (%.3f s / %.3f s)" % (ratio, full.files / tenth.files, full.wall, tenth.wall))
    return out


def render(load_before, load_after, started, data_bytes):
    header, rows = table()
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    text = [" | ".join(h.ljust(w) for h, w in zip(header, widths)), "-+-".join("-" * w for w in widths)]
    text += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    found = targets()
    missed = sum(1 for t in found if t[1] != "met")
    text += ["", "targets (issues 9, 14, 16, 19, 25): %d met, %d missed; load average %s before, %s after (2 cores: wall"
             " times above a load of 2 are inflated, CPU times are not)" % (len(found) - missed, missed, load_before, load_after)]
    text += ["  %-50s %-7s %s" % t for t in found]
    m = machine()
    md = ["# Benchmarks", "",
          "Written by `scripts/bench%s` on %s (UTC); %d s in all. Do not edit the measured sections by hand: run the" %
          (" --quick" if SCALE == "quick" else "", started, ELAPSED or time.time() - START),
          "script again. The notes at the end come from `scripts/benchmark/findings.md`.", "",
          "## Machine", "",
          "| | |", "|---|---|"]
    md += ["| %s | %s |" % (k, v) for k, v in m.items()]
    md += ["| load average (1/5/15 min) before | %s |" % load_before, "| load average after | %s |" % load_after, "",
           "A load average above the core count means other work shared the machine: wall times are then noisy,",
           "and ratios between tools measured moments apart are more trustworthy than absolute figures.", "",
           "## Data (`%s` set, %.2f GB, generated by `scripts/benchmark/make_data.py`)" % (SCALE, data_bytes / 1e9), "",
           "12 MP JPEGs (EXIF, GPS, Canon-style maker note, IFD1 thumbnail, XMP, IPTC); 1920x1080 PNGs (tEXt/zTXt/iTXt,",
           "eXIf, XMP); 12 MP HEICs (heif-enc, EXIF+XMP by exiftool); an H.264+AAC MP4 (x264 lossless, options SEI,",
           "udta location, Apple mdta keys) looped to size with stream copy. Warm page cache.", "",
           "## Results", "",
           "`x cp`: wall time over the `cp` of the same files. `x metascrub`: a peer's wall time over metascrub's",
           "(above 1: metascrub is faster). Extrapolated rows are marked.", "",
           "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    md += ["", "## Targets (issues 9, 14, 16, 19, 25)", "", "| target | result | measured |", "|---|---|---|"]
    md += ["| %s | %s | %s |" % t for t in targets()]
    findings = os.path.join(HERE, "findings.md")
    if os.path.exists(findings):
        md += ["", open(findings).read().rstrip()]
    return "\n".join(text), "\n".join(md) + "\n"


START = time.time()
ELAPSED = None  # set when re-rendering saved results


def main():
    saved = os.path.join(CACHE, "results-%s.json" % SCALE)
    if len(sys.argv) > 5 and sys.argv[5] == "--render":
        data = json.load(open(saved))
        RESULTS.extend(Result(**r) for r in data["results"])
        global ELAPSED
        ELAPSED = data.get("seconds")
        text, md = render(data["load_before"], data["load_after"], data["started"], data["data_bytes"])
        print(text)
        open(MD_OUT, "w").write(md)
        return
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    os.makedirs(WORK, exist_ok=True)
    if ONLY == "flat":
        flat_rotated()
        text, _ = render(load_before, " ".join(open("/proc/loadavg").read().split()[:3]), started, 0)
        print(text)
        return
    if ONLY == "heic-convert":
        heic_convert()
        text, _ = render(load_before, " ".join(open("/proc/loadavg").read().split()[:3]), started, 0)
        print(text)
        return
    data_bytes = sum(os.path.getsize(p) for p in glob.glob(os.path.join(DATA, "*", "*")))
    jpegs = batch_clean("jpeg", "jpg")
    batch_clean("png", "png")
    batch_clean("heic", "heic")
    rotated_vs_upright()
    flat_rotated()
    mix(jpegs)
    linearity(jpegs)
    scan(jpegs)
    per_invocation(jpegs)
    precommit(jpegs)
    mp4()
    heic_convert()
    load_after = " ".join(open("/proc/loadavg").read().split()[:3])
    text, md = render(load_before, load_after, started, data_bytes)
    print(text)
    with open(MD_OUT, "w") as f:
        f.write(md)
    with open(saved, "w") as f:
        json.dump(dict(started=started, load_before=load_before, load_after=load_after, data_bytes=data_bytes,
                       seconds=time.time() - START, results=[r.as_dict() for r in RESULTS]), f, indent=1)
    log("wrote %s" % MD_OUT)


if __name__ == "__main__":
    main()
