package io.flowkafka.connectors.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback HTTP/1.1 server on a plain socket that resets (TCP RST: linger 0, then close) the first
 * {@code resets} connections after reading their request, then answers 200: the "connection reset by peer" the
 * JDK's HttpServer cannot produce. Records each request's idempotency key and body.
 */
final class ResettingHttpServer implements AutoCloseable {
    private final ServerSocket socket;
    private final Thread thread;
    private final List<String> keys = new CopyOnWriteArrayList<>();
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private final List<Boolean> answered = new CopyOnWriteArrayList<>();

    ResettingHttpServer(int resets) throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        thread = new Thread(() -> {
            int n = 0;
            while (!socket.isClosed()) {
                try (Socket s = socket.accept()) {
                    readRequest(s.getInputStream());
                    if (n++ < resets) {
                        s.setSoLinger(true, 0); // close with RST
                        answered.add(false);
                    } else {
                        answered.add(true); // before the answer: the client may return as soon as it reads it
                        OutputStream out = s.getOutputStream();
                        out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                } catch (IOException e) {
                    // closed
                }
            }
        }, "resetting-http-server");
        thread.setDaemon(true);
        thread.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/events");
    }

    List<String> keys() {
        return List.copyOf(keys);
    }

    List<String> bodies() {
        return List.copyOf(bodies);
    }

    List<Boolean> answered() {
        return List.copyOf(answered);
    }

    private void readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("eof");
            }
            head.write(b);
            state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3)) ? state + 1
                    : b == '\r' ? 1 : 0;
        }
        int length = 0;
        String key = null;
        for (String line : head.toString(StandardCharsets.US_ASCII).split("\r\n")) {
            String l = line.toLowerCase(Locale.ROOT);
            if (l.startsWith("content-length:")) {
                length = Integer.parseInt(l.substring(15).trim());
            } else if (l.startsWith("idempotency-key:")) {
                key = line.substring(16).trim();
            }
        }
        keys.add(String.valueOf(key));
        bodies.add(new String(in.readNBytes(length), StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
