// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time.
//
// One fragment = one physical pixel. The pixel is mapped to a layout cell, the layout texture names the GPU in that
// cell (or a gap), the data texture holds that GPU's value in dense order, and the colour-map texture turns the
// normalised value into a colour.

uniform highp isampler2D uLayout;   // R32I, layout cells: dense GPU index, -1 for gaps
uniform highp sampler2D uData;      // R32F, values in dense order, uDataWidth per texture row
uniform highp sampler2D uPrevious;  // R32F, the previous frame's values, same shape
uniform float uMix;                 // 0 = previous frame .. 1 = current frame
uniform highp usampler2D uHealth;   // R8UI, health bytes in dense order, same shape as uData
uniform sampler2D uColorMap;        // 256 x 1 RGBA8, sampled with NEAREST

uniform vec2 uViewport;       // framebuffer size in physical pixels
uniform vec2 uOrigin;         // top-left of the layout in physical pixels, from the top-left of the framebuffer
uniform float uCellSize;      // physical pixels per cell
uniform ivec2 uLayoutSize;
uniform int uDataWidth;
uniform vec2 uRange;          // value mapped to the first and last colour
uniform int uHasData;
uniform vec4 uBackground;
uniform vec4 uAisle;
uniform vec4 uNoData;
uniform int uStale;            // 1: the data is old; GPUs get a dot pattern, readable without colour
uniform vec2 uSelectedCentre;  // physical pixels; the ring is drawn when uSelectedRadius > 0
uniform float uSelectedRadius;
uniform highp usampler2D uMarks;   // R8UI, 1 for GPUs outlined (a job's blast radius), same shape as uData
uniform int uHasMarks;
uniform int uFocusFirst;      // GPUs [uFocusFirst, uFocusFirst + uFocusCount) are in focus, the others dimmed
uniform int uFocusCount;      // 0: everything in focus
uniform int uAggregate;       // below one pixel per GPU: 0 = the worst (highest) value under a pixel, 1 = the mean

out vec4 fragColor;

// Diagonal hatching for GPUs without a value: readable without colour vision, and in a photograph of a wall.
vec4 hatch(vec4 base, vec2 pixel)
{
    float stripe = mod(floor((pixel.x + pixel.y) / 3.0), 2.0);
    return mix(base, base * 0.55, stripe);
}

// The normalised value (0..1) of the GPU in a layout cell. Returns 0 for a gap, 1 for a GPU with no value (NaN,
// offline, no data), 2 for a GPU with a value in t.
bool outOfFocus(ivec2 cell)
{
    int gpu = texelFetch(uLayout, cell, 0).r;
    return uFocusCount > 0 && gpu >= 0 && (gpu < uFocusFirst || gpu >= uFocusFirst + uFocusCount);
}

int sampleCell(ivec2 cell, out float t, out bool marked)
{
    t = 0.0;
    marked = false;
    int gpu = texelFetch(uLayout, cell, 0).r;
    if (gpu < 0) {
        return 0;
    }
    ivec2 texel = ivec2(gpu % uDataWidth, gpu / uDataWidth);
    marked = uHasMarks == 1 && texelFetch(uMarks, texel, 0).r != 0u;
    float value = texelFetch(uData, texel, 0).r;
    if (uMix < 1.0) {
        float previous = texelFetch(uPrevious, texel, 0).r;
        if (!isnan(previous) && !isnan(value)) {
            value = mix(previous, value, uMix);
        }
    }
    uint state = texelFetch(uHealth, texel, 0).r & 7u;
    if (isnan(value) || state == 3u || state == 4u) {
        return 1;
    }
    t = clamp((value - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0);
    return 2;
}

vec4 colourOf(float t)
{
    // Same rounding as ColorMap::indexFor on the CPU.
    return texelFetch(uColorMap, ivec2(int(floor(t * 255.0 + 0.5)), 0), 0);
}

// Old data never looks fresh: a grid of light dots over every GPU.
vec4 staleDots(vec4 colour, vec2 pixel)
{
    if (uStale == 1 && mod(floor(pixel.x), 6.0) < 2.0 && mod(floor(pixel.y), 6.0) < 2.0) {
        return vec4(mix(colour.rgb, vec3(1.0), 0.65), 1.0);
    }
    return colour;
}

// The selected GPU: a white ring with a dark outline around its cell, visible at any zoom.
vec4 selectionRing(vec4 colour, vec2 pixel)
{
    if (uSelectedRadius > 0.0) {
        float d = distance(pixel, uSelectedCentre);
        if (d >= uSelectedRadius && d < uSelectedRadius + 2.0) {
            return vec4(1.0);
        }
        if (d >= uSelectedRadius + 2.0 && d < uSelectedRadius + 3.0) {
            return vec4(0.0, 0.0, 0.0, 1.0);
        }
    }
    return colour;
}

void main()
{
    vec2 pixel = vec2(gl_FragCoord.x, uViewport.y - gl_FragCoord.y);
    vec2 p = (pixel - uOrigin) / uCellSize;
    ivec2 cell = ivec2(floor(p));
    if (p.x < 0.0 || p.y < 0.0 || cell.x >= uLayoutSize.x || cell.y >= uLayoutSize.y) {
        fragColor = selectionRing(uBackground, pixel);
        return;
    }
    if (uCellSize < 1.0) {
        // Several GPUs share this pixel: show the worst (highest) or the mean of those with a value, so a single
        // hot GPU is never hidden by its neighbours; the pixel's footprint is at most 4 x 4 cells.
        vec2 edge = (floor(pixel) - uOrigin) / uCellSize;
        ivec2 first = max(ivec2(floor(edge)), ivec2(0));
        ivec2 last = min(ivec2(ceil(edge + vec2(1.0 / uCellSize))) - 1, min(first + 3, uLayoutSize - 1));
        float worst = 0.0;
        float sum = 0.0;
        int values = 0;
        int gpus = 0;
        bool anyMarked = false;
        for (int y = first.y; y <= last.y; ++y) {
            for (int x = first.x; x <= last.x; ++x) {
                float t;
                bool marked;
                int kind = sampleCell(ivec2(x, y), t, marked);
                gpus += kind > 0 ? 1 : 0;
                anyMarked = anyMarked || marked;
                if (kind == 2) {
                    worst = max(worst, t);
                    sum += t;
                    ++values;
                }
            }
        }
        vec4 aggregated;
        if (gpus == 0) {
            aggregated = uAisle;
        } else if (uHasData == 0 || values == 0) {
            aggregated = staleDots(hatch(uNoData, pixel), pixel);
        } else {
            aggregated = staleDots(colourOf(uAggregate == 0 ? worst : sum / float(values)), pixel);
        }
        if (anyMarked) {
            aggregated = vec4(mix(aggregated.rgb, vec3(1.0), 0.6), 1.0);
        }
        if (outOfFocus(first)) {
            aggregated.rgb *= 0.35;
        }
        fragColor = selectionRing(aggregated, pixel);
        return;
    }
    float t;
    bool marked;
    int kind = sampleCell(cell, t, marked);
    if (kind == 0) {
        fragColor = selectionRing(uAisle, pixel);
        return;
    }
    vec4 colour = (uHasData == 0 || kind == 1) ? hatch(uNoData, pixel) : colourOf(t);
    // From a few pixels per GPU on, a thin darker edge separates the cells.
    if (uCellSize >= 6.0) {
        vec2 within = (p - vec2(cell)) * uCellSize;
        if (within.x < 1.0 || within.y < 1.0) {
            colour.rgb *= 0.7;
        }
    }
    colour = staleDots(colour, pixel);
    if (outOfFocus(cell)) {
        colour.rgb *= 0.35;
    }
    // Outlined GPUs: a white frame inside the cell, or the whole cell lightened when it is too small for one.
    if (marked) {
        vec2 within = (p - vec2(cell)) * uCellSize;
        float frame = max(1.0, floor(uCellSize / 8.0));
        if (uCellSize < 4.0) {
            colour = vec4(mix(colour.rgb, vec3(1.0), 0.6), 1.0);
        } else if (within.x < frame || within.y < frame || within.x >= uCellSize - frame
            || within.y >= uCellSize - frame) {
            colour = vec4(1.0);
        }
    }
    fragColor = selectionRing(colour, pixel);
}
