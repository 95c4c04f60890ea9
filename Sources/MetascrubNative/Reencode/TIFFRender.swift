// SPDX-License-Identifier: GPL-3.0-or-later

extension TIFFCodec {
    /// The first image as a viewer shows it (Orientation applied), 8-bit, for conversion to JPEG/PNG; 16-bit grey
    /// and RGB also at 16 bits (`DecodedImage.wide`), which a PNG keeps.
    ///
    /// Grey and RGB strips (with or without unassociated alpha) come from their stored samples, so 8-bit
    /// sources convert exactly; everything else (palette, CMYK, YCbCr, JPEG-compressed, tiled, planar) through
    /// libtiff's RGBA reader, which premultiplies unassociated alpha.
    public static func render(bytes: [UInt8]) throws -> DecodedImage {
        let stored: (raster: Raster, coding: TIFFCoding, icc: [UInt8]?)
        var wide: WideRaster?
        if let samples = try? decodeSamples(bytes), let raster = eightBit(samples) {
            stored = (raster, samples.coding, samples.iccProfile)
            wide = sixteenBit(samples)
        } else {
            let rgba = try decodeRGBA(bytes)
            let raster = rgba.raster.hasTransparency ? rgba.raster : rgba.raster.rgb()
            stored = (raster, rgba.coding, rgba.icc)
        }
        let turned = PixelOrientation.apply(stored.coding.orientation, width: stored.raster.width, height: stored.raster.height,
                                            pixels: stored.raster.pixels, channels: stored.raster.channels)
        if let w = wide {
            let t = PixelOrientation.apply(stored.coding.orientation, width: w.width, height: w.height, pixels: w.samples, channels: w.layout.rawValue)
            wide = WideRaster(width: t.width, height: t.height, layout: w.layout, samples: t.pixels)
        }
        return DecodedImage(raster: Raster(width: turned.width, height: turned.height, layout: stored.raster.layout, pixels: turned.pixels),
                            iccProfile: stored.icc, chroma: nil, bitDepth: stored.coding.bitsPerSample, decoder: libraryName, wide: wide)
    }

    /// 16-bit grey or RGB samples without alpha as they are (libpng's simplified writer would premultiply alpha).
    static func sixteenBit(_ samples: TIFFSamples) -> WideRaster? {
        let c = samples.coding
        guard c.bitsPerSample == 16, c.sampleFormat == 1, c.extraSamples.isEmpty,
              (c.photometric == 1 && c.samplesPerPixel == 1) || (c.photometric == 2 && c.samplesPerPixel == 3) else { return nil }
        let values = samples.pixels.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        return WideRaster(width: c.width, height: c.height, layout: c.samplesPerPixel == 1 ? .gray : .rgb, samples: values)
    }

    /// Grey, grey+alpha, RGB or RGBA (unassociated alpha) samples as an 8-bit raster: 16-bit samples rounded to
    /// the nearest 8-bit level, (v + 128) / 257, as ImageMagick does. Nil for any other layout.
    static func eightBit(_ samples: TIFFSamples) -> Raster? {
        let c = samples.coding
        guard c.sampleFormat == 1, c.photometric == 1 || c.photometric == 2 else { return nil }
        let colours = c.photometric == 2 ? 3 : 1
        let alpha = c.samplesPerPixel == colours + 1 && c.extraSamples == [2]
        guard c.samplesPerPixel == colours || alpha else { return nil }
        let count = c.width * c.height * c.samplesPerPixel
        var values = [UInt8](repeating: 0, count: count)
        samples.pixels.withUnsafeBytes { raw in
            if c.bitsPerSample == 16 {
                let wide = raw.bindMemory(to: UInt16.self)
                for i in 0..<count { values[i] = UInt8((UInt32(wide[i]) + 128) / 257) }
            } else {
                for i in 0..<count { values[i] = raw[i] }
            }
        }
        switch (colours, alpha) {
        case (3, false): return Raster(width: c.width, height: c.height, layout: .rgb, pixels: values)
        case (3, true): return Raster(width: c.width, height: c.height, layout: .rgba, pixels: values)
        case (1, false): return Raster(width: c.width, height: c.height, layout: .gray, pixels: values)
        default:
            var rgba = [UInt8](repeating: 0, count: c.width * c.height * 4)
            for i in 0..<(c.width * c.height) {
                let v = values[i * 2]
                rgba[i * 4] = v; rgba[i * 4 + 1] = v; rgba[i * 4 + 2] = v; rgba[i * 4 + 3] = values[i * 2 + 1]
            }
            return Raster(width: c.width, height: c.height, layout: .rgba, pixels: rgba)
        }
    }
}
