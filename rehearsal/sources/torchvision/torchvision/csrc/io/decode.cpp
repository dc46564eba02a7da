// torchvision.io's codecs (rehearsal stand-in): libjpeg and libpng, linked.
#include <stdio.h>
#include <jpeglib.h>
#include <png.h>

static char codecs[64];

extern "C" const char* torchvision_codecs() {
    snprintf(codecs, sizeof codecs, "jpeg %d, png %s", JPEG_LIB_VERSION, png_get_libpng_ver(nullptr));
    return codecs;
}
