#!/usr/bin/env bash
# Decoded-image benchmark (issue 17): a 24-megapixel JPEG and a large PNG, generated here with
# Pillow and served by a local nginx, decoded to pixels by httpcontent from Python
# (hc.DecodedImage) and by requests.get + Pillow (Image.open(BytesIO(content)).load()), interleaved
# round-robin in one run. Also the time to the last pixel after the last byte: the same images
# served at a limited rate (nginx limit_rate), each decode's time minus a plain download's time.
# Writes the section "## Decoded images (issue 17)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/images.sh
#
# Knobs (environment): BENCH_ROUNDS (5), BENCH_IMAGE_MP (24: JPEG megapixels), BENCH_PNG_MP (12),
# BENCH_RATE (limit_rate for the "after the last byte" figures, 4m), BENCH_SERVER_CPU (0),
# BENCH_CLIENT_CPU (1), BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (600), BENCH_LIBDIR (build),
# PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=image-bench
. "$HERE/lib.sh"
ROUNDS=${BENCH_ROUNDS:-5}
JPEG_MP=${BENCH_IMAGE_MP:-24}
PNG_MP=${BENCH_PNG_MP:-12}
RATE=${BENCH_RATE:-4m}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-600}

bench_need_nginx
bench_need_tools
bench_need_library
"$PYTHON" -c "import PIL, requests" 2>/dev/null || bench_die "Pillow and requests are needed (scripts/setup.sh installs them)"
bench_pin nginx client
bench_make_tmp imagebench

mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
bench_log "generating a ${JPEG_MP} MP JPEG and a ${PNG_MP} MP PNG with Pillow"
"$PYTHON" - "$TMP/www" "$JPEG_MP" "$PNG_MP" <<'PY'
import sys
from PIL import Image, ImageFilter
out, jmp, pmp = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def photo(mp):
    w = int((mp * 1e6 * 3 / 2) ** 0.5) // 16 * 16
    h = int(mp * 1e6 / w) // 16 * 16
    # A smooth scene with texture: gradients plus upscaled noise (compresses like a photo).
    noise = Image.effect_noise((w // 8, h // 8), 64).resize((w, h), Image.BILINEAR)
    grad = Image.linear_gradient("L").resize((w, h))
    return Image.merge("RGB", (grad, noise, grad.transpose(Image.FLIP_LEFT_RIGHT)))
photo(jmp).save(f"{out}/photo.jpg", quality=90)
photo(pmp).save(f"{out}/big.png", compress_level=6)
PY
chmod 644 "$TMP/www"/*
bench_start_nginx http="types { image/jpeg jpg; image/png png; }" server="location /slow/ { alias $TMP/www/; limit_rate $RATE; }"
BASE="http://127.0.0.1:$PORT"
bench_log "nginx $NGINX_VERSION serving $BASE (pid $BENCH_SERVER_PID); files: $(cd "$TMP/www" && ls -l --block-size=K photo.jpg big.png | awk '{print $9"="$5}' | tr '\n' ' ')"

bench_snapshot
export BENCH_META_LIB=$LIB_ID BENCH_META_PINNING=$PINNING BENCH_META_NGINX=$NGINX_VERSION
export BENCH_META_CURL="$(curl-config --version 2>/dev/null || echo '?')" BENCH_META_RATE=$RATE
export BENCH_META_LOAD="$(bench_loadavg)"
PYTHONPATH="$TMP/py" timeout "$STEP_TIMEOUT" "${PIN_CLIENT[@]}" "$PYTHON" "$HERE/image_bench.py" \
    --base "$BASE" --www "$TMP/www" --rounds "$ROUNDS" --output "$OUTPUT"
