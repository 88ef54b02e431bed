/** ffmpeg arguments of the frame endpoint (ffprobe's: lib/media's probeArgs); input: a local path or a signed URL. */

/**
 * ffmpeg arguments that write one JPEG of `location` at `seekSeconds` to stdout. The seek comes before `-i` (input
 * seeking): ffmpeg jumps to the keyframe before that moment — by file offset, an HTTP Range for a URL — and decodes
 * only from there; it then drops frames until the first one at or after the moment.
 */
export function jpegFrameArgs(location: string, seekSeconds: number, width: number | undefined): string[] {
  return [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-threads',
    '1',
    ...(seekSeconds > 0 ? ['-ss', seekSeconds.toFixed(6)] : []),
    '-i',
    location,
    '-map',
    '0:v:0',
    '-an',
    '-sn',
    '-dn',
    '-frames:v',
    '1',
    // Full-range output (what JPEG decoders assume); `-2` keeps the aspect ratio with an even height.
    '-vf',
    [...(width ? [`scale=${width}:-2`] : []), 'scale=out_range=full', 'format=yuvj420p'].join(','),
    '-q:v',
    '3',
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    'pipe:1',
  ];
}

/** Replaces a signed URL (and any signature left in ffmpeg's words) so that an error message can be logged. */
export function withoutLocation(text: string, location: string): string {
  return text
    .split(location)
    .join('<media>')
    .replace(/X-Amz-[A-Za-z-]+=[^&\s"']+/g, 'X-Amz-…');
}
