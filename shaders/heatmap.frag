// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time.
//
// Pass 3, every paint (an animation step between two frames, a hover): one fragment = one physical pixel, and as
// little work as possible, since a software renderer pays it for every pixel at the display's rate. Pass 2
// (heatmapscreen.frag) left the pixel's two values and its colour transform in one texel; here the morph between
// the frames, the colour map and the transform.

uniform highp usampler2D uScreen; // RGBA32UI, one texel per framebuffer pixel (heatmapscreen.frag)
uniform sampler2D uColorMap;      // 256 x 1 RGBA8
uniform float uMix;               // 0 = previous frame .. 1 = current frame
uniform vec2 uRange;              // value mapped to the first and last colour

out vec4 fragColor;

void main()
{
    uvec4 s = texelFetch(uScreen, ivec2(gl_FragCoord.xy), 0);
    float value = mix(uintBitsToFloat(s.g), uintBitsToFloat(s.r), uMix);
    float t = clamp((value - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0);
    // Same rounding as ColorMap::indexFor on the CPU.
    vec3 colour = texelFetch(uColorMap, ivec2(int(floor(t * 255.0 + 0.5)), 0), 0).rgb;
    vec3 b = vec3(uvec3(s.a, s.a >> 10, s.a >> 20) & uvec3(1023u)) / 1023.0;
    fragColor = vec4(colour * uintBitsToFloat(s.b) + b, 1.0);
}
