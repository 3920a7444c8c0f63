// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time, and AGGREGATE: 1 for the
// variant used below one physical pixel per cell, 0 for the other.
//
// Pass 2, when the data, the zoom, the range or what is drawn over the cells changed, never for an animation or
// hover repaint: one fragment per physical pixel. Everything about the pixel except the morph between two frames
// goes into one texel, so that pass 3 (heatmap.frag) is a fetch, a mix, a colour-map fetch and a multiply-add:
//   r: the current value, g: the value morphed from (float bits); b: A (float bits), a: B (3 x 10 bits, RGB);
//   the pixel's colour = colourMap(mix(g, r)) * A + B. A = 0 for what is not a GPU's value (aisles, hatching).
// The text over the map (names, values, banners) is folded in too.
// Software renderers run both sides of every branch, so the two cases are two programs, not a branch here.

uniform highp usampler2D uResolved; // RGBA32UI, pass 1's texel per layout cell (heatmapresolve.frag)
uniform vec2 uViewport;       // framebuffer size in physical pixels
uniform vec2 uOrigin;         // top-left of the layout in physical pixels, from the top-left of the framebuffer
uniform float uCellSize;      // physical pixels per cell
uniform ivec2 uLayoutSize;
uniform vec2 uRange;          // value mapped to the first and last colour
uniform int uAggregate;       // below one pixel per cell: 0 = the worst (highest) value under a pixel, 1 = the mean
uniform vec4 uBackground;
uniform vec4 uAisle;
uniform vec4 uNoData;
uniform vec4 uDomain;          // the shared domain highlighted: its GPUs not outlined are framed or tinted in it
uniform int uStale;            // 1: the data is old; GPUs get a dot pattern, readable without colour
uniform vec2 uSelectedCentre;  // physical pixels; the ring is drawn when uSelectedRadius > 0
uniform float uSelectedRadius;
uniform sampler2D uOverlay;    // the text over the map, premultiplied RGBA, one texel per pixel from the top-left
uniform int uHasOverlay;

out uvec4 screen;

// The pixel's colour transform c -> c * a + b, built up in the order the effects apply.
float a;
vec3 b;

void setColour(vec3 colour)
{
    a = 0.0;
    b = colour;
}

void scale(float k)
{
    a *= k;
    b *= k;
}

void towardsWhite(float f)
{
    a *= 1.0 - f;
    b = b * (1.0 - f) + vec3(f);
}

void towards(vec3 colour, float f)
{
    a *= 1.0 - f;
    b = b * (1.0 - f) + colour * f;
}

// Diagonal hatching for GPUs without a value: readable without colour vision, and in a photograph of a wall.
void hatch(vec2 pixel)
{
    setColour(uNoData.rgb);
    if (mod(floor((pixel.x + pixel.y) / 3.0), 2.0) >= 1.0) {
        scale(0.55);
    }
}

// Old data never looks fresh: a grid of light dots over every GPU.
void staleDots(vec2 pixel)
{
    if (uStale == 1 && mod(floor(pixel.x), 6.0) < 2.0 && mod(floor(pixel.y), 6.0) < 2.0) {
        towardsWhite(0.65);
    }
}

// The selected GPU: a white ring with a dark outline around its cell, visible at any zoom.
void selectionRing(vec2 pixel)
{
    if (uSelectedRadius > 0.0) {
        float d = distance(pixel, uSelectedCentre);
        if (d >= uSelectedRadius && d < uSelectedRadius + 2.0) {
            setColour(vec3(1.0));
        } else if (d >= uSelectedRadius + 2.0 && d < uSelectedRadius + 3.0) {
            setColour(vec3(0.0));
        }
    }
}

void emit(float value, float before)
{
    uvec3 bits = uvec3(clamp(b, 0.0, 1.0) * 1023.0 + 0.5);
    screen = uvec4(floatBitsToUint(value), floatBitsToUint(before), floatBitsToUint(a),
        bits.r | (bits.g << 10) | (bits.b << 20));
}

// The pixel's values and transform when it is over the layout.
void shade(vec2 pixel, vec2 p, ivec2 cell, out float value, out float before)
{
    value = 0.0;
    before = 0.0;
#if AGGREGATE
    // Several GPUs share this pixel: the worst (highest) or the mean of those with a value, so a single hot GPU is
    // never hidden by its neighbours; the footprint is at most 4 x 4 cells. The current frame and the one morphed
    // from are reduced alike, and pass 3 mixes the two.
    vec2 edge = (floor(pixel) - uOrigin) / uCellSize;
    ivec2 first = max(ivec2(floor(edge)), ivec2(0));
    ivec2 last = min(ivec2(ceil(edge + vec2(1.0 / uCellSize))) - 1, min(first + 3, uLayoutSize - 1));
    float worst = 0.0;
    float worstBefore = 0.0;
    float sum = 0.0;
    float sumBefore = 0.0;
    int values = 0;
    int gpus = 0;
    bool marked = false;
    bool domain = false;
    for (int y = first.y; y <= last.y; ++y) {
        for (int x = first.x; x <= last.x; ++x) {
            uvec4 c = texelFetch(uResolved, ivec2(x, y), 0);
            uint kind = c.b & 3u;
            gpus += kind > 0u ? 1 : 0;
            marked = marked || (c.b & 4u) != 0u;
            domain = domain || (c.b & 16u) != 0u;
            if (kind == 2u) {
                float t = clamp((uintBitsToFloat(c.r) - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0);
                float tb = clamp((uintBitsToFloat(c.g) - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0);
                worst = max(worst, t);
                worstBefore = max(worstBefore, tb);
                sum += t;
                sumBefore += tb;
                ++values;
            }
        }
    }
    if (gpus == 0) {
        setColour(uAisle.rgb);
    } else {
        if (values == 0) {
            hatch(pixel);
        } else {
            // Back to values, so that pass 3 normalises both cases alike.
            float t = uAggregate == 0 ? worst : sum / float(values);
            float tb = uAggregate == 0 ? worstBefore : sumBefore / float(values);
            value = uRange.x + t * (uRange.y - uRange.x);
            before = uRange.x + tb * (uRange.y - uRange.x);
            a = 1.0;
            b = vec3(0.0);
        }
        staleDots(pixel);
    }
    if (marked) {
        towardsWhite(0.6);
    } else if (domain) {
        towards(uDomain.rgb, 0.5);
    }
    if ((texelFetch(uResolved, first, 0).b & 8u) != 0u) {
        scale(0.35);
    }
#else
    uvec4 c = texelFetch(uResolved, cell, 0);
    uint kind = c.b & 3u;
    if (kind == 0u) {
        setColour(uAisle.rgb);
    } else {
        if (kind == 1u) {
            hatch(pixel);
        } else {
            value = uintBitsToFloat(c.r);
            before = uintBitsToFloat(c.g);
            a = 1.0;
            b = vec3(0.0);
        }
        vec2 within = (p - vec2(cell)) * uCellSize;
        // From a few pixels per GPU on, a thin darker edge separates the cells.
        if (uCellSize >= 6.0 && (within.x < 1.0 || within.y < 1.0)) {
            scale(0.7);
        }
        staleDots(pixel);
        if ((c.b & 8u) != 0u) {
            scale(0.35);
        }
        // Outlined GPUs: a white frame inside the cell, or the whole cell lightened when it is too small for one.
        if ((c.b & 4u) != 0u) {
            float frame = max(1.0, floor(uCellSize / 8.0));
            if (uCellSize < 4.0) {
                towardsWhite(0.6);
            } else if (within.x < frame || within.y < frame || within.x >= uCellSize - frame
                || within.y >= uCellSize - frame) {
                setColour(vec3(1.0));
            }
        } else if ((c.b & 16u) != 0u) {
            // The rest of the domain highlighted: the same frame in its colour, or the cell tinted with it.
            float frame = max(1.0, floor(uCellSize / 8.0));
            if (uCellSize < 4.0) {
                towards(uDomain.rgb, 0.5);
            } else if (within.x < frame || within.y < frame || within.x >= uCellSize - frame
                || within.y >= uCellSize - frame) {
                setColour(uDomain.rgb);
            }
        }
    }
#endif
}

void main()
{
    vec2 pixel = vec2(gl_FragCoord.x, uViewport.y - gl_FragCoord.y);
    vec2 p = (pixel - uOrigin) / uCellSize;
    ivec2 cell = ivec2(floor(p));
    float value = 0.0;
    float before = 0.0;
    setColour(uBackground.rgb);
    if (p.x >= 0.0 && p.y >= 0.0 && cell.x < uLayoutSize.x && cell.y < uLayoutSize.y) {
        shade(pixel, p, cell, value, before);
    }
    selectionRing(pixel);
    // The text over everything: (c * a + b) under premultiplied (rgb, alpha) is c * a * (1 - alpha) + b * (1 - alpha)
    // + rgb.
    if (uHasOverlay == 1) {
        vec4 text = texelFetch(uOverlay, ivec2(pixel), 0);
        a *= 1.0 - text.a;
        b = b * (1.0 - text.a) + text.rgb;
    }
    emit(value, before);
}
