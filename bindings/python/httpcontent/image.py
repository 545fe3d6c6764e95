"""Images, in one module: `Image` keeps an image body and reads its format and size from the
header (`ImageContent`); `DecodedImage` decodes PNG, JPEG, GIF and WebP bodies to pixels while they
arrive (libpng, libjpeg-turbo, giflib, libwebp inside the library); `response.content` is a
`DecodedImageContent` whose `data` is filled in place by the library (no copy), and which numpy
(`numpy.asarray(content)`) and Pillow (`content.to_pillow()`) read without copying where they can."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Callable

from . import _ffi
from . import _constants as _c
from . import bodies as _bodies  # noqa: F401  # pyright: ignore[reportUnusedImport] (declares hc_buffer_free)
from ._handle import Handle
from .errors import check
from .handlers import _LENDING, Handler, _lent

_ROWS_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)

for _name, _res, _args in [
    ("hc_image_options_new", ctypes.c_void_p, []),
    ("hc_image_options_free", None, [ctypes.c_void_p]),
    ("hc_image_options_set", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]),
    ("hc_image_options_set_rows_cb", ctypes.c_int, [ctypes.c_void_p, _ROWS_CB, ctypes.c_void_p]),
    ("hc_image_options_set_allocator", ctypes.c_int, [ctypes.c_void_p, _ffi.ALLOC_CB, _ffi.RELEASE_CB,
                                                      ctypes.c_void_p]),
    ("hc_handler_image_decode_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_response_image_attr", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    ("hc_response_image_pixels", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_response_image_encoded", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_ffi.c_ubyte_p),
                                                 ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_image_encode_png", ctypes.c_int, [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.POINTER(ctypes.c_size_t)]),
]:
    _ffi.declare(_name, _res, _args)

_MODES = {"RGBA": _c.HC_IMAGE_MODE_RGBA, "RGB": _c.HC_IMAGE_MODE_RGB, "L": _c.HC_IMAGE_MODE_L}
_OPTION = {"mode": _c.HC_IMAGE_MODE, "max_pixels": _c.HC_IMAGE_MAX_PIXELS,
           "apply_orientation": _c.HC_IMAGE_APPLY_ORIENTATION, "keep_encoded": _c.HC_IMAGE_KEEP_ENCODED}
_ATTR = {"format": _c.HC_IMAGE_ATTR_FORMAT, "width": _c.HC_IMAGE_ATTR_WIDTH,
         "height": _c.HC_IMAGE_ATTR_HEIGHT, "channels": _c.HC_IMAGE_ATTR_CHANNELS,
         "stride": _c.HC_IMAGE_ATTR_STRIDE, "has_alpha": _c.HC_IMAGE_ATTR_HAS_ALPHA,
         "orientation": _c.HC_IMAGE_ATTR_ORIENTATION, "frame_count": _c.HC_IMAGE_ATTR_FRAME_COUNT}
_FORMATS = {_c.HC_IMAGE_PNG: "png", _c.HC_IMAGE_JPEG: "jpeg", _c.HC_IMAGE_GIF: "gif",
            _c.HC_IMAGE_WEBP: "webp", _c.HC_IMAGE_BMP: "bmp"}


@dataclass(frozen=True)
class ImageContent:
    """An image's format ("png", "jpeg", "gif", "webp", "bmp"), pixel size and bytes."""
    format: str
    width: int
    height: int
    data: bytes


class Image(Handler):
    """Keeps an image body and inspects it: format sniffed from the bytes, width and height read
    from the header. Bytes that are not the declared type, or a header claiming more than 100
    megapixels, raise `hc.DecodeError`. Content is None for an empty 204/HEAD response.
    Accepts 200-299, `image/*`."""

    _any_type_by_default = False
    _may_raise = False

    def _new_native(self) -> int | None:
        native: int | None = _ffi.lib().hc_handler_image_new()
        return native

    def _content(self, response_ptr: int) -> ImageContent | None:
        lib = _ffi.lib()
        fmt, width, height = ctypes.c_int(), ctypes.c_int64(), ctypes.c_int64()
        check(lib.hc_response_image(response_ptr, ctypes.byref(fmt), ctypes.byref(width),
                                    ctypes.byref(height)))
        if fmt.value == _c.HC_IMAGE_NONE:
            return None
        return ImageContent(_FORMATS[fmt.value], width.value, height.value,
                            _ffi.borrowed_bytes(lib.hc_response_bytes, response_ptr))


class _Options(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_image_options_free(ptr)

    def __init__(self) -> None:
        super().__init__(_ffi.lib().hc_image_options_new())


@dataclass(frozen=True)
class DecodedImageContent:
    """A decoded image. `data` holds `height` rows of `stride` (= width * channels) bytes, tightly
    packed, in `mode` ("RGBA", "RGB" or "L"). `format` is the source's ("png", "jpeg", "gif",
    "webp"), `has_alpha` whether it had alpha or a transparent colour, `orientation` its EXIF
    orientation (1 when absent; applied to the pixels only with `apply_orientation=True`),
    `frame_count` its frames (GIF; the first is decoded). `encoded` is the body, when
    `keep_encoded=True`, else None."""
    width: int
    height: int
    mode: str
    format: str
    data: bytes = field(repr=False)
    channels: int
    stride: int
    has_alpha: bool
    orientation: int
    frame_count: int
    encoded: bytes | None = field(default=None, repr=False)

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """numpy's array interface: `numpy.asarray(content)` is a read-only (height, width,
        channels) uint8 view of `data` ((height, width) for "L"), no copy."""
        shape = (self.height, self.width) if self.channels == 1 else (self.height, self.width, self.channels)
        return {"version": 3, "shape": shape, "typestr": "|u1", "data": self.data}

    def to_pillow(self) -> Any:
        """A Pillow image of the pixels (sharing `data` for "RGBA" and "L"; Pillow copies "RGB")."""
        from PIL import Image
        return Image.frombuffer(self.mode, (self.width, self.height), self.data, "raw", self.mode, 0, 1)

    def to_png(self) -> bytes:
        """The pixels encoded as PNG by the library (libpng)."""
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        lib = _ffi.lib()
        check(lib.hc_image_encode_png(self.data, self.width, self.height, self.channels, self.stride,
                                      ctypes.byref(out), ctypes.byref(size)))
        try:
            return ctypes.string_at(out, size.value)
        finally:
            lib.hc_buffer_free(out)


class DecodedImage(Handler):
    """Decodes a PNG, JPEG, GIF (first frame) or WebP body to pixels while it arrives: the pixels
    are ready when the last byte is. Options: `mode` "RGBA" (default), "RGB" (alpha dropped) or
    "L" (Rec.601 luma, as Pillow); `max_pixels` (default 100 megapixels), checked from the header
    before any pixel memory is taken (beyond it: `hc.TooLarge`); `apply_orientation` (default
    False) rotates/flips JPEGs by their EXIF orientation; `on_rows(first_row, row_count)` is
    called as rows are decoded (raise to stop); `keep_encoded` also keeps the body; plus the usual
    handler options (`max_size` limits the encoded body). Truncated, corrupt or lying images and
    bytes that are not the declared type raise `hc.DecodeError`. Content is None for an empty
    204/HEAD response. Accepts 200-299, `image/*`."""

    _any_type_by_default = False
    _may_raise = False

    def __init__(self, mode: str = "RGBA", max_pixels: int | None = None, apply_orientation: bool = False,
                 on_rows: Callable[[int, int], Any] | None = None, *, keep_encoded: bool = False,
                 **options: Any) -> None:
        super().__init__(**options)
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")
        if max_pixels is not None and max_pixels < 1:
            raise ValueError("max_pixels must be at least 1")
        self.mode = mode
        self.max_pixels = max_pixels
        self.apply_orientation = apply_orientation
        self.on_rows = on_rows
        self.keep_encoded = keep_encoded
        if on_rows is not None:   # its exceptions are re-raised by the request they belong to
            self._shared = True
            self._may_raise = True

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        lib = _ffi.lib()
        with _Options() as opts:
            check(lib.hc_image_options_set(opts, _OPTION["mode"], _MODES[self.mode]))
            if self.max_pixels is not None:
                check(lib.hc_image_options_set(opts, _OPTION["max_pixels"], self.max_pixels))
            check(lib.hc_image_options_set(opts, _OPTION["apply_orientation"], int(self.apply_orientation)))
            check(lib.hc_image_options_set(opts, _OPTION["keep_encoded"], int(self.keep_encoded)))
            # The pixels land in a bytes object made by the binding (no copy afterwards).
            check(lib.hc_image_options_set_allocator(opts, *_LENDING, None))
            if self.on_rows is not None:
                on_rows = self.on_rows

                def rows(_userdata: int | None, first: int, count: int) -> int:
                    def run() -> int:
                        on_rows(first, count)
                        return 0
                    return self._guard(run, sink)
                self._keep = _ROWS_CB(rows)
                check(lib.hc_image_options_set_rows_cb(opts, self._keep, None))
            native: int | None = lib.hc_handler_image_decode_new(opts)
            return native

    def _content(self, response_ptr: int) -> DecodedImageContent | None:
        lib = _ffi.lib()
        values: dict[str, int] = {}
        out = ctypes.c_int64()
        for name, attr in _ATTR.items():
            check(lib.hc_response_image_attr(response_ptr, attr, ctypes.byref(out)))
            values[name] = out.value
        if values["format"] == 0:
            return None
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(lib.hc_response_image_pixels(response_ptr, ctypes.byref(data), ctypes.byref(size)))
        pixels = _lent.get(data.value or 0)
        if pixels is None or len(pixels) != size.value:   # the library's own memory: copy it
            pixels = ctypes.string_at(data.value or 0, size.value) if size.value else b""
        encoded = (_ffi.borrowed_bytes(lib.hc_response_image_encoded, response_ptr)
                   if self.keep_encoded else None)
        return DecodedImageContent(
            width=values["width"], height=values["height"], mode=self.mode,
            format=_FORMATS.get(values["format"], "unknown"), data=pixels, channels=values["channels"],
            stride=values["stride"], has_alpha=bool(values["has_alpha"]), orientation=values["orientation"],
            frame_count=values["frame_count"], encoded=encoded)


__all__ = ["DecodedImage", "DecodedImageContent", "Image", "ImageContent"]
