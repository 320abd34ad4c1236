package io.flowkafka.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.CountDownLatch;

/**
 * A child-JVM main for {@link ChildJvmIT}: prints {@code ready <arg><greeting.suffix><$GREETING_ENV>} and waits
 * until standard input closes, or until killed with the argument {@code until-killed}; with the
 * argument {@code exit} it prints {@code bye} and exits with code 3; with the argument {@code temp-file} it first
 * creates a file in {@code java.io.tmpdir} and prints {@code file <path>}.
 */
public final class PrintAndWaitMain {
    private PrintAndWaitMain() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        String arg = args.length > 0 ? args[0] : "";
        if (arg.equals("exit")) {
            System.out.println("bye");
            System.exit(3);
        }
        if (arg.equals("temp-file")) {
            System.out.println("file " + java.nio.file.Files.createTempFile("child-", ".tmp"));
        }
        System.out.println("ready " + arg + System.getProperty("greeting.suffix", "")
                + System.getenv().getOrDefault("GREETING_ENV", ""));
        System.out.flush();
        if (arg.equals("until-killed")) {
            new CountDownLatch(1).await();
        }
        System.in.transferTo(OutputStream.nullOutputStream());
    }
}
