#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generates the benchmark data set, deterministically and cheaply, into a cache folder.

  make_data.py CACHE_DIR SCALE      SCALE: full (1000 JPEG, 200 PNG, 100 HEIC, 1 GB MP4)
                                           quick (a tenth of everything: 100, 20, 10, 100 MB)

Each format's *one* base file is made once with the real tools (ImageMagick/cjpeg, exiftool, heif-enc,
ffmpeg); the many variants are byte copies that differ in a marker string or an added text chunk, so
that 1,000 JPEGs cost 1,000 file writes, not 1,000 exiftool runs. A finished set leaves a stamp file and
is reused on the next run.
"""
import os, shutil, struct, subprocess, sys, zlib

COUNTS = {"full": dict(jpeg=1000, png=200, heic=100, mp4_mb=1000, mp4_small_mb=100),
          "quick": dict(jpeg=100, png=20, heic=10, mp4_mb=100, mp4_small_mb=10)}
# Marker written into one EXIF string of the base file; variants replace its digits in place (same
# length, so no offset changes and no checksum to fix in JPEG and HEIC).
MARKER = b"MSBENCH-000000"
GPS = ["-GPSVersionID=2 3 0 0", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
       "-GPSLongitudeRef=E", "-GPSAltitude=35", "-GPSAltitudeRef=0", "-GPSDateStamp=2021:07:14",
       "-GPSTimeStamp=08:11:12"]
EXIF = ["-IFD0:Make=Canon", "-IFD0:Model=Canon EOS BENCH", "-IFD0:Software=bench 1.0",
        "-IFD0:Artist=Bench Artist", "-IFD0:Copyright=Bench Copyright", "-IFD0:ImageDescription=" + MARKER.decode(),
        "-IFD0:ModifyDate=2021:07:14 10:11:12", "-ExifIFD:DateTimeOriginal=2021:07:14 10:11:12",
        "-ExifIFD:OffsetTimeOriginal=+02:00", "-ExifIFD:SerialNumber=BENCH-SERIAL-123",
        "-ExifIFD:LensModel=BENCH-LENS 35mm", "-ExifIFD:UserComment=bench user comment",
        "-ExifIFD:ExposureTime=0.008", "-ExifIFD:FNumber=2.8", "-ExifIFD:ISO=100"] + GPS
XMP = ["-XMP-dc:Creator=Bench Creator", "-XMP-dc:Rights=Bench Rights", "-XMP-photoshop:City=Paris",
       "-XMP-xmp:CreatorTool=bench 1.0"]
IPTC = ["-IPTC:By-line=Bench Byline", "-IPTC:CopyrightNotice=Bench Copyright", "-IPTC:City=Paris"]
HERE = os.path.dirname(os.path.abspath(__file__))
FXPY = os.path.join(HERE, "..", "fixtures", "fx.py")


def run(*cmd, **kw):
    subprocess.run(list(cmd), check=True, **kw)


def exiftool(*args):
    run("exiftool", "-q", "-q", "-m", "-overwrite_original", "-n", *args)


def log(msg):
    print("bench-data: " + msg, file=sys.stderr, flush=True)


def base_jpeg(base):
    """12 MP (4000x3000) photo-like JPEG (plasma + fixed-seed noise) with EXIF, GPS, a Canon maker note,
    an IFD1 thumbnail, XMP and IPTC."""
    out = os.path.join(base, "base.jpg")
    if os.path.exists(out):
        return out
    log("base JPEG (12 MP, ImageMagick + cjpeg + exiftool)")
    tmp = out + ".tmp.jpg"
    ppm = subprocess.run(["convert", "-seed", "7", "-size", "4000x3000", "plasma:steelblue-tan",
                          "-attenuate", "0.3", "+noise", "Gaussian", "ppm:-"], check=True, capture_output=True).stdout
    with open(tmp, "wb") as f:
        subprocess.run(["cjpeg", "-quality", "90", "-optimize"], input=ppm, stdout=f, check=True)
    run("python3", FXPY, "jpeg-canon", tmp, tmp)  # EXIF with a Canon-style maker note (owner, serial)
    thumb = os.path.join(base, "thumb.jpg")
    run("convert", tmp, "-resize", "160x120", "-quality", "80", thumb)
    exiftool(*EXIF, *XMP, *IPTC, "-ThumbnailImage<=" + thumb, tmp)
    os.rename(tmp, out)
    return out


def base_portraits(base):
    """A phone portrait as phones write it: 4032x3024 (whole 16x16 MCUs), 4:2:0, EXIF with GPS, once with
    Orientation 6 and once upright (1), otherwise byte-identical: the pair that prices the bake decision."""
    rotated, upright = os.path.join(base, "portrait-6.jpg"), os.path.join(base, "portrait-1.jpg")
    if os.path.exists(rotated) and os.path.exists(upright):
        return rotated, upright
    log("base portrait JPEGs (4032x3024, Orientation 6 and 1)")
    tmp = rotated + ".tmp.jpg"
    ppm = subprocess.run(["convert", "-seed", "11", "-size", "4032x3024", "plasma:olivedrab-khaki",
                          "-attenuate", "0.3", "+noise", "Gaussian", "ppm:-"], check=True, capture_output=True).stdout
    with open(tmp, "wb") as f:
        subprocess.run(["cjpeg", "-quality", "90", "-sample", "2x2"], input=ppm, stdout=f, check=True)
    exiftool(*EXIF, "-IFD0:Orientation=1", tmp)
    shutil.copyfile(tmp, upright)
    exiftool("-IFD0:Orientation=6", tmp)
    os.rename(tmp, rotated)
    return rotated, upright


def flat_photos(base):
    """Issue 25's pathological photos: a 12 MP night shot (4080x3072, whole 16x16 MCUs, 4:2:0) whose top two
    thirds are one flat colour (its first MCU rows decode identically after a lossless turn, so the band check
    cannot settle it) and whose bottom third is textured, once per EXIF orientation 1-8, otherwise identical;
    and a decompression bomb: a flat 16000x16000 JPEG (4 MB, 256 MP) with Orientation 6."""
    folder = os.path.join(base, "flat")
    stamp = os.path.join(folder, ".complete")
    if os.path.exists(stamp):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    log("flat 12 MP night photos (orientations 1-8) and a 16000x16000 bomb")
    tmp = os.path.join(folder, "night.tmp.jpg")
    ppm = subprocess.run(["convert", "-size", "4080x2048", "xc:#101828", "(", "-seed", "5", "-size", "4080x1024",
                          "plasma:gray20-orange", "-attenuate", "0.3", "+noise", "Gaussian", ")", "-append", "ppm:-"],
                         check=True, capture_output=True).stdout
    with open(tmp, "wb") as f:
        subprocess.run(["cjpeg", "-quality", "90", "-sample", "2x2"], input=ppm, stdout=f, check=True)
    exiftool(*EXIF, tmp)
    for o in range(1, 9):
        out = os.path.join(folder, "night-%d.jpg" % o)
        shutil.copyfile(tmp, out)
        exiftool("-IFD0:Orientation=%d" % o, out)
    os.unlink(tmp)
    # The bomb is streamed row by row into cjpeg: nothing here holds the 768 MB image either.
    bomb = os.path.join(folder, "bomb-16000.jpg")
    with open(bomb, "wb") as f:
        p = subprocess.Popen(["cjpeg", "-quality", "90", "-sample", "2x2"], stdin=subprocess.PIPE, stdout=f)
        p.stdin.write(b"P6\n16000 16000\n255\n")
        row = bytes([0x10, 0x18, 0x28]) * 16000
        for _ in range(16000):
            p.stdin.write(row)
        p.stdin.close()
        if p.wait() != 0:
            raise SystemExit("cjpeg failed on the bomb")
    exiftool("-IFD0:Orientation=6", bomb)
    open(stamp, "w").close()
    return folder


def base_png(base):
    """1920x1080 PNG with tEXt/zTXt/iTXt text chunks, XMP and an eXIf chunk with GPS."""
    out = os.path.join(base, "base.png")
    if os.path.exists(out):
        return out
    log("base PNG (1920x1080 + text chunks)")
    tmp = out + ".tmp.png"
    run("convert", "-seed", "11", "-size", "1920x1080", "plasma:tan-steelblue", "-depth", "8", "-define", "png:exclude-chunks=date,time", tmp)
    exiftool("-PNG:Author=Bench Author", "-PNG:Comment=bench comment", "-PNG:Software=bench 1.0",
             "-PNG:Description=bench description", "-PNG:CreationTime=2021:07:14 10:11:12",
             "-IFD0:Make=Canon", "-IFD0:Model=Canon EOS BENCH", *GPS, *XMP, tmp)
    os.rename(tmp, out)
    return out


def base_heic(base, jpeg):
    """HEIC (heif-enc, x265) of the 12 MP base image with EXIF (GPS) and XMP added by exiftool."""
    out = os.path.join(base, "base.heic")
    if os.path.exists(out):
        return out
    log("base HEIC (heif-enc of the 12 MP image, exiftool EXIF)")
    tmp = out + ".tmp.heic"
    png = os.path.join(base, "heic-src.png")
    run("convert", jpeg, "-strip", png)
    run("heif-enc", "-q", "50", "-o", tmp, png, stdout=subprocess.DEVNULL)
    os.unlink(png)
    exiftool(*EXIF, *XMP, tmp)
    os.rename(tmp, out)
    return out


FF = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
META = ["-metadata", "location=+48.8584+002.2945+035.000/", "-metadata", "com.apple.quicktime.location.ISO6709=+48.8584+002.2945+035.000/",
        "-metadata", "com.apple.quicktime.make=Apple", "-metadata", "com.apple.quicktime.model=iPhone BENCH",
        "-metadata", "com.apple.quicktime.software=bench 1.0", "-metadata", "make=Apple", "-metadata", "model=iPhone BENCH",
        "-metadata", "title=bench title", "-metadata", "creation_time=2021-07-14T10:11:12Z", "-movflags", "+use_metadata_tags"]


def base_clip(base):
    """~100 MB H.264 clip (x264 ultrafast, lossless qp 0, 1280x720 testsrc2 with fixed-seed noise, 25 fps,
    GOP 25) with AAC audio; x264 writes its options SEI in the first frame. Encoded once; the 1 GB file is
    this clip looped with -c copy."""
    out = os.path.join(base, "clip.mp4")
    if os.path.exists(out):
        return out
    log("base MP4 clip (x264 lossless, ~100 MB; the slow step, once)")
    tmp = out + ".tmp.mp4"
    run(*FF, "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=6,noise=alls=12:allf=t+u",
        "-f", "lavfi", "-i", "sine=frequency=440:duration=6:sample_rate=48000",
        "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-g", "25", "-pix_fmt", "yuv420p",
        "-c:a", "aac", "-b:a", "128k", "-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1", tmp)
    os.rename(tmp, out)
    return out


def mp4_of_size(clip, path, megabytes):
    """An MP4 of about `megabytes` MB: the clip looped (or cut) with stream copy, metadata added."""
    if os.path.exists(path):
        return
    size = os.path.getsize(clip)
    target = megabytes * 1_000_000
    tmp = path + ".tmp.mp4"
    if target >= size:
        loops = max(0, round(target / size) - 1)
        run(*FF, "-stream_loop", str(loops), "-i", clip, "-map", "0", "-c", "copy", "-map_metadata", "-1", *META, tmp)
    else:
        seconds = max(1, round(6 * target / size))
        run(*FF, "-i", clip, "-t", str(seconds), "-map", "0", "-c", "copy", "-map_metadata", "-1", *META, tmp)
    os.rename(tmp, path)


def variants(src, folder, count, ext, vary):
    """`count` copies of src named 00000.ext..., each made distinct by vary(bytes, index)."""
    os.makedirs(folder, exist_ok=True)
    data = open(src, "rb").read()
    for i in range(count):
        path = os.path.join(folder, "%05d.%s" % (i, ext))
        with open(path, "wb") as f:
            f.write(vary(data, i))


def vary_marker(data, i):
    new = b"MSBENCH-%06d" % i
    assert MARKER in data, "marker missing from the base file"
    return data.replace(MARKER, new)


def vary_png(data, i):
    """Inserts a tEXt chunk (with its CRC) right after IHDR."""
    body = b"tEXt" + b"BenchIndex\0" + b"%06d" % i
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    ihdr_end = 8 + 8 + 13 + 4
    return data[:ihdr_end] + chunk + data[ihdr_end:]


def main():
    cache, scale = sys.argv[1], sys.argv[2]
    counts = COUNTS[scale]
    base = os.path.join(cache, "base")
    os.makedirs(base, exist_ok=True)
    if "--flat-only" in sys.argv[3:]:
        flat_photos(base)
        return
    jpeg = base_jpeg(base)
    png = base_png(base)
    heic = base_heic(base, jpeg)
    if "--base-only" in sys.argv[3:]:
        return
    flat_photos(base)
    clip = base_clip(base)
    root = os.path.join(cache, scale)
    # Added after the first sets were cached, so made on their own when missing.
    rotated, upright = base_portraits(base)
    for name, src in (("portrait-rotated", rotated), ("portrait-upright", upright)):
        if not os.path.exists(os.path.join(root, name, ".complete")):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
            variants(src, os.path.join(root, name), counts["jpeg"] // 5, "jpg", vary_marker)
            open(os.path.join(root, name, ".complete"), "w").close()
    stamp = os.path.join(root, ".complete")
    if os.path.exists(stamp):
        return
    for entry in os.listdir(root) if os.path.exists(root) else []:
        if not entry.startswith("portrait-"):
            shutil.rmtree(os.path.join(root, entry), ignore_errors=True)
    log("%s set: %d JPEG, %d PNG, %d HEIC, %d MB + %d MB MP4" % (scale, counts["jpeg"], counts["png"], counts["heic"],
                                                                counts["mp4_mb"], counts["mp4_small_mb"]))
    variants(jpeg, os.path.join(root, "jpeg"), counts["jpeg"], "jpg", vary_marker)
    variants(png, os.path.join(root, "png"), counts["png"], "png", vary_png)
    variants(heic, os.path.join(root, "heic"), counts["heic"], "heic", vary_marker)
    os.makedirs(os.path.join(root, "mp4"), exist_ok=True)
    mp4_of_size(clip, os.path.join(root, "mp4", "big.mp4"), counts["mp4_mb"])
    mp4_of_size(clip, os.path.join(root, "mp4", "small.mp4"), counts["mp4_small_mb"])
    open(stamp, "w").close()


if __name__ == "__main__":
    main()
