// poppler-glib and cairo for NewsstandCovers: page 1 of a PDF rendered in-process. One wrapper does the whole
// render, so that no GLib or cairo type crosses into Swift beside libvips's (both modules include GLib).
#ifndef ISSUES_CPOPPLER_SHIM_H
#define ISSUES_CPOPPLER_SHIM_H
#include <poppler.h>
#include <cairo.h>
#include <stdlib.h>
#include <string.h>

/// Renders page 1 of the PDF at `path` on white, `width` pixels wide (its height following the page, at most
/// `max_height`), as cairo's ARGB32 pixels (stride width * 4), copied into a buffer freed with cpoppler_free.
/// Returns NULL on failure with a message in `error` (freed with cpoppler_free too) when one is known.
static inline unsigned char *cpoppler_render_first_page(const char *path, int width, int max_height, int *out_height, char **error) {
    *error = NULL;
    GError *gerror = NULL;
    char *uri = g_filename_to_uri(path, NULL, &gerror);
    if (!uri) { if (gerror) { *error = strdup(gerror->message); g_error_free(gerror); } return NULL; }
    PopplerDocument *document = poppler_document_new_from_file(uri, NULL, &gerror);
    g_free(uri);
    if (!document) { if (gerror) { *error = strdup(gerror->message); g_error_free(gerror); } return NULL; }
    if (poppler_document_get_n_pages(document) < 1) { *error = strdup("the PDF has no pages"); g_object_unref(document); return NULL; }
    PopplerPage *page = poppler_document_get_page(document, 0);
    if (!page) { *error = strdup("page 1 cannot be read"); g_object_unref(document); return NULL; }
    double page_width = 0, page_height = 0;
    poppler_page_get_size(page, &page_width, &page_height);
    if (!(page_width > 0.5 && page_height > 0.5)) {
        *error = strdup("page 1 has no size"); g_object_unref(page); g_object_unref(document); return NULL;
    }
    double scale = width / page_width;
    int height = (int)(page_height * scale + 0.5);
    if (height < 1) height = 1;
    if (height > max_height) height = max_height;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    unsigned char *pixels = NULL;
    if (cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = cairo_create(surface);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        cairo_scale(cr, scale, scale);
        poppler_page_render(page, cr);
        cairo_destroy(cr);
        cairo_surface_flush(surface);
        size_t size = (size_t)width * height * 4;
        pixels = malloc(size);
        if (pixels && cairo_image_surface_get_stride(surface) == width * 4) {
            memcpy(pixels, cairo_image_surface_get_data(surface), size);
        } else {
            free(pixels); pixels = NULL; *error = strdup("cannot hold the rendered page");
        }
    } else {
        *error = strdup("cannot make the page's image");
    }
    cairo_surface_destroy(surface);
    g_object_unref(page);
    g_object_unref(document);
    *out_height = height;
    return pixels;
}

static inline void cpoppler_free(void *pointer) { free(pointer); }
#endif
