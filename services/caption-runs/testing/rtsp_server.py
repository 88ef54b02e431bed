"""A GStreamer RTSP server on 127.0.0.1 for tests: `rtsp_server.py <port> <mount> [file.mp4]`.

Serves a live test pattern (or the H.264 of an MP4 file, played once) at rtsp://127.0.0.1:<port>/<mount>, shared by
every client. Prints "ready" once it listens. Killing it and starting it again is a camera reboot. The pattern's size and
rate come from RTSP_TEST_WIDTH, RTSP_TEST_HEIGHT and RTSP_TEST_FPS (320, 240, 10).
"""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

Gst.init(None)
port, mount = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    launch = f'( filesrc location="{sys.argv[3]}" ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 )'
else:
    width = int(os.environ.get("RTSP_TEST_WIDTH", "320"))
    height = int(os.environ.get("RTSP_TEST_HEIGHT", "240"))
    fps = int(os.environ.get("RTSP_TEST_FPS", "10"))
    launch = (
        f"( videotestsrc is-live=true pattern=ball ! video/x-raw,width={width},height={height},framerate={fps}/1 "
        f"! x264enc tune=zerolatency speed-preset=ultrafast key-int-max={fps} ! rtph264pay name=pay0 pt=96 )"
    )
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(port)
factory = GstRtspServer.RTSPMediaFactory()
factory.set_launch(launch)
factory.set_shared(True)
server.get_mount_points().add_factory(f"/{mount}", factory)
if server.attach(None) == 0:
    print("failed to listen", flush=True)
    sys.exit(1)
print("ready", flush=True)
GLib.MainLoop().run()
