// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time.
//
// Pass 2, only when more GPUs than pixels are shown, once per frame and zoom (not per paint): one fragment per
// physical pixel. Several GPUs share the pixel: keep the worst (highest) or the mean of those with a value, so a
// single hot GPU is never hidden by its neighbours; the footprint is at most 4 x 4 cells. Both the current frame and
// the one morphed from are reduced, and the paint mixes the two.
//   r: the current normalised value (float bits), g: the one morphed from, b: 0 no GPU, 1 GPUs without a value,
//   2 a value; | 4 any marked, | 8 the first cell out of focus.

uniform highp usampler2D uResolved; // RGBA32UI, pass 1's texel per layout cell
uniform vec2 uViewport;       // framebuffer size in physical pixels
uniform vec2 uOrigin;         // top-left of the layout in physical pixels, from the top-left of the framebuffer
uniform float uCellSize;      // physical pixels per cell, below 1 here
uniform ivec2 uLayoutSize;
uniform vec2 uRange;          // value mapped to the first and last colour
uniform int uAggregate;       // 0 = the worst (highest) value under a pixel, 1 = the mean

out uvec4 reduced;

float normalised(uint bits)
{
    return clamp((uintBitsToFloat(bits) - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0);
}

void main()
{
    vec2 pixel = floor(vec2(gl_FragCoord.x, uViewport.y - gl_FragCoord.y));
    vec2 edge = (pixel - uOrigin) / uCellSize;
    if (edge.x < -1.0 / uCellSize || edge.y < -1.0 / uCellSize) {
        reduced = uvec4(0u);
        return;
    }
    ivec2 first = max(ivec2(floor(edge)), ivec2(0));
    ivec2 last = min(ivec2(ceil(edge + vec2(1.0 / uCellSize))) - 1, min(first + 3, uLayoutSize - 1));
    float worst = 0.0;
    float worstBefore = 0.0;
    float sum = 0.0;
    float sumBefore = 0.0;
    int values = 0;
    int gpus = 0;
    uint marked = 0u;
    for (int y = first.y; y <= last.y; ++y) {
        for (int x = first.x; x <= last.x; ++x) {
            uvec4 cell = texelFetch(uResolved, ivec2(x, y), 0);
            uint kind = cell.b & 3u;
            gpus += kind > 0u ? 1 : 0;
            marked |= cell.b & 4u;
            if (kind == 2u) {
                float t = normalised(cell.r);
                float before = normalised(cell.g);
                worst = max(worst, t);
                worstBefore = max(worstBefore, before);
                sum += t;
                sumBefore += before;
                ++values;
            }
        }
    }
    uint kind = gpus == 0 ? 0u : (values == 0 ? 1u : 2u);
    uint focus = texelFetch(uResolved, first, 0).b & 8u;
    float now = uAggregate == 0 ? worst : sum / float(max(values, 1));
    float before = uAggregate == 0 ? worstBefore : sumBefore / float(max(values, 1));
    reduced = uvec4(floatBitsToUint(now), floatBitsToUint(before), kind | marked | focus, 0u);
}
