/** Public surface of media handling: ffmpeg binaries, video probing, streamed frame extraction, media types, images. */
export { bundledFfmpegPaths, resolveFfmpegPaths } from './ffmpeg-paths.js';
export type { FfmpegPaths } from './ffmpeg-paths.js';
export { parseProbeOutput, probeArgs, probeVideo, VideoProbeError } from './probe-video.js';
export type { VideoInfo } from './probe-video.js';
export { extractFrames, frameExtractionArgs, FrameDecodeError } from './video-frames.js';
export type { ExtractFramesOptions, VideoFrame } from './video-frames.js';
export {
  ACCEPTED_EXTENSIONS,
  ACCEPTED_IMAGE_EXTENSIONS,
  ACCEPTED_VIDEO_EXTENSIONS,
  detectMediaType,
  mediaTypeFromName,
  withDetectedExtension,
} from './media-type.js';
export type { MediaKind, MediaType } from './media-type.js';
export { decodeImage, UndecodableImageError } from './image-decode.js';
export type { DecodeImageOptions } from './image-decode.js';
export { assertImagePixels, ImageTooLargeError, imageDimensions, MAX_DECODABLE_PIXELS } from './image-pixels.js';
export type { ImageDimensions } from './bmp.js';
