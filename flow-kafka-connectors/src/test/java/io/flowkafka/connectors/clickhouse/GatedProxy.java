package io.flowkafka.connectors.clickhouse;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP proxy on loopback in front of the real ClickHouse, so a test controls when the sink can reach it: before
 * {@link #listen} nothing listens on its port (connections are refused, no INSERT starts); after {@link #listen},
 * accepted connections wait until {@link #open} before bytes flow both ways (the sink's first request hangs). Not a
 * fake: every byte the sink gets comes from ClickHouse.
 */
final class GatedProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final CountDownLatch gate = new CountDownLatch(1);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;

    GatedProxy(URI target) throws IOException {
        this.targetHost = target.getHost();
        this.targetPort = target.getPort();
        try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            this.port = probe.getLocalPort(); // closed again: refused until listen()
        }
    }

    /** The URL the sink is pointed at. */
    URI url() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Starts accepting connections (held until {@link #open}). */
    GatedProxy listen() throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        server = s;
        Thread accept = new Thread(() -> {
            while (!s.isClosed()) {
                try {
                    Socket client = s.accept();
                    sockets.add(client);
                    Thread t = new Thread(() -> forward(client), "gated-proxy-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "gated-proxy-accept");
        accept.setDaemon(true);
        accept.start();
        return this;
    }

    /** Lets held and new connections through. */
    GatedProxy open() {
        gate.countDown();
        return this;
    }

    private void forward(Socket client) {
        try {
            gate.await();
            Socket upstream = new Socket(targetHost, targetPort);
            sockets.add(upstream);
            Thread back = new Thread(() -> pipe(upstream, client), "gated-proxy-back");
            back.setDaemon(true);
            back.start();
            pipe(client, upstream);
        } catch (IOException e) {
            close(client);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pipe(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the other side closed
        } finally {
            close(from);
            close(to);
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    /** Stops listening and drops every connection: refused again until {@link #listen} (the gate stays as it is). */
    GatedProxy refuse() {
        ServerSocket s = server;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        sockets.forEach(GatedProxy::close);
        sockets.clear();
        return this;
    }

    @Override
    public void close() {
        gate.countDown();
        refuse();
    }
}
