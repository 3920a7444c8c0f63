// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time.
//
// Pass 3, every paint: one fragment = one physical pixel. The pixel is mapped to a layout cell, whose value, kind
// and flags pass 1 (heatmapresolve.frag) gathered into one texel; below one pixel per cell pass 2
// (heatmapreduce.frag) reduced the cells under each pixel. Here: the morph between frames, the colour map and what
// depends on the pixel (cell edges, hatching, stale dots, outlines, the selection ring).

uniform highp usampler2D uResolved; // RGBA32UI, per layout cell (heatmapresolve.frag)
uniform highp usampler2D uReduced;  // RGBA32UI, per framebuffer pixel when uCellSize < 1 (heatmapreduce.frag)
uniform float uMix;                 // 0 = previous frame .. 1 = current frame
uniform sampler2D uColorMap;        // 256 x 1 RGBA8, sampled with NEAREST

uniform vec2 uViewport;       // framebuffer size in physical pixels
uniform vec2 uOrigin;         // top-left of the layout in physical pixels, from the top-left of the framebuffer
uniform float uCellSize;      // physical pixels per cell
uniform ivec2 uLayoutSize;
uniform vec2 uRange;          // value mapped to the first and last colour
uniform vec4 uBackground;
uniform vec4 uAisle;
uniform vec4 uNoData;
uniform int uStale;            // 1: the data is old; GPUs get a dot pattern, readable without colour
uniform vec2 uSelectedCentre;  // physical pixels; the ring is drawn when uSelectedRadius > 0
uniform float uSelectedRadius;

out vec4 fragColor;

// Diagonal hatching for GPUs without a value: readable without colour vision, and in a photograph of a wall.
vec4 hatch(vec4 base, vec2 pixel)
{
    float stripe = mod(floor((pixel.x + pixel.y) / 3.0), 2.0);
    return mix(base, base * 0.55, stripe);
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
        // Several GPUs share this pixel: their worst or mean, reduced once per frame and zoom (see
        // heatmapreduce.frag), morphed from the previous frame's.
        uvec4 reduced = texelFetch(uReduced, ivec2(gl_FragCoord.xy), 0);
        uint kind = reduced.b & 3u;
        vec4 aggregated;
        if (kind == 0u) {
            aggregated = uAisle;
        } else if (kind == 1u) {
            aggregated = staleDots(hatch(uNoData, pixel), pixel);
        } else {
            aggregated = staleDots(colourOf(mix(uintBitsToFloat(reduced.g), uintBitsToFloat(reduced.r), uMix)), pixel);
        }
        if ((reduced.b & 4u) != 0u) {
            aggregated = vec4(mix(aggregated.rgb, vec3(1.0), 0.6), 1.0);
        }
        if ((reduced.b & 8u) != 0u) {
            aggregated.rgb *= 0.35;
        }
        fragColor = selectionRing(aggregated, pixel);
        return;
    }
    uvec4 resolved = texelFetch(uResolved, cell, 0);
    uint kind = resolved.b & 3u;
    if (kind == 0u) {
        fragColor = selectionRing(uAisle, pixel);
        return;
    }
    bool marked = (resolved.b & 4u) != 0u;
    vec4 colour;
    if (kind == 1u) {
        colour = hatch(uNoData, pixel);
    } else {
        float value = uintBitsToFloat(resolved.r);
        if (uMix < 1.0) {
            value = mix(uintBitsToFloat(resolved.g), value, uMix);
        }
        colour = colourOf(clamp((value - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0));
    }
    // From a few pixels per GPU on, a thin darker edge separates the cells.
    if (uCellSize >= 6.0) {
        vec2 within = (p - vec2(cell)) * uCellSize;
        if (within.x < 1.0 || within.y < 1.0) {
            colour.rgb *= 0.7;
        }
    }
    colour = staleDots(colour, pixel);
    if ((resolved.b & 8u) != 0u) {
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
