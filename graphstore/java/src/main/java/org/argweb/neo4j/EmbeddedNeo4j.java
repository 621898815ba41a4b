package org.argweb.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.neo4j.cli.AdminTool;
import org.neo4j.cli.ExecutionContext;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Runs Neo4j Community embedded with only a Bolt connector on localhost.
 *
 * <p>Arguments: {@code --home DIR --port PORT [--pagecache BYTES] [--tx-log-retention POLICY]
 * [--tx-log-rotation BYTES] [--import-args FILE]}. With {@code --import-args} the offline importer
 * ({@code neo4j-admin database import full}, its arguments one per line in FILE) runs first, in this
 * JVM, on the stopped store: the bulk first load then pays one JVM start instead of two. An import
 * that fails ends the process with {@value #IMPORT_FAILED} before any database starts. The password of the built-in user comes from the environment variable
 * {@value #PASSWORD_ENV}, never from the command line, which every local user can read in the
 * process list. It is set only while the user still has its factory password (a new store); an
 * existing store keeps the password it was created with, so a different one is refused at login
 * instead of silently replacing it. The process keeps running until it receives SIGTERM/SIGINT, then
 * shuts the DBMS down cleanly. Clients talk to it exclusively over Bolt, exactly as they would to a
 * standalone server or a cluster.
 */
public final class EmbeddedNeo4j {
    /** Environment variable holding the password (the child's environment is private to its owner). */
    public static final String PASSWORD_ENV = "ARGWEB_NEO4J_LAUNCH_PASSWORD";

    /** Exit status when the offline import of {@code --import-args} failed. */
    public static final int IMPORT_FAILED = 3;

    /** How long the Bolt server waits for its threads and connections when the DBMS shuts down. */
    private static final long BOLT_SHUTDOWN_WAIT_MS = 500;

    private EmbeddedNeo4j() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 7687;
        long pagecache = ByteUnit.mebiBytes(512);
        // Without a retention policy transaction logs grew to eight times the store during a full
        // load; argweb needs none for recovery beyond the last checkpoint (ingests are re-runnable).
        String retention = "256M size";
        long rotation = ByteUnit.mebiBytes(64);
        Path importArgs = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--pagecache" -> pagecache = Long.parseLong(args[++i]);
                case "--tx-log-retention" -> retention = args[++i];
                case "--tx-log-rotation" -> rotation = Long.parseLong(args[++i]);
                case "--import-args" -> importArgs = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        String password = System.getenv(PASSWORD_ENV);
        if (home == null || password == null || password.isEmpty()) {
            throw new IllegalArgumentException("--home and the environment variable " + PASSWORD_ENV + " are required");
        }
        Files.createDirectories(home);
        if (importArgs != null) {
            runImport(home, Files.readAllLines(importArgs));
        }

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pagecache)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, retention)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, rotation)
                // Bolt shuts down after every database has stopped, so nothing is left for its
                // thread pool and connections to finish; their 5 s default waits made each stop take
                // 10 s even with no client connected (debug.log: "Shutting down Bolt server").
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(BOLT_SHUTDOWN_WAIT_MS))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(BOLT_SHUTDOWN_WAIT_MS))
                .build();

        try {
            if (setInitialPassword(dbms, password)) {
                System.out.println("argweb-neo4j password set on a new store");
            }
        } catch (RuntimeException e) {
            // Without this the DBMS threads keep the JVM alive and the caller waits for a ready line
            // that never comes.
            e.printStackTrace();
            dbms.shutdown();
            System.exit(1);
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }, "argweb-neo4j-shutdown"));
        System.out.println("argweb-neo4j ready bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }

    /**
     * Runs {@code neo4j-admin} with {@code args} (e.g. {@code database import full neo4j --nodes=...})
     * against {@code home}, printing its output and then a line with its exit status and duration.
     */
    private static void runImport(Path home, List<String> args) throws Exception {
        Path conf = home.resolve("conf");
        Files.createDirectories(conf);
        long started = System.nanoTime();
        int status = AdminTool.execute(new ExecutionContext(home, conf), args.toArray(String[]::new));
        System.out.println("argweb-neo4j import exit " + status + " after " + (System.nanoTime() - started) / 1_000_000 + " ms");
        System.out.flush();
        if (status != 0) {
            System.exit(IMPORT_FAILED);
        }
    }

    /**
     * The built-in user starts with a must-change password; set ours (without forcing a change, so
     * that drivers can log in directly) only then. A store whose password was already set keeps it:
     * a client with another password is refused at login and told so, rather than the store being
     * silently re-keyed by whoever starts it. Running against "system" from inside the JVM is
     * trusted.
     *
     * @return whether the password was set (a new store)
     */
    private static boolean setInitialPassword(DatabaseManagementService dbms, String password) {
        var system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        AtomicBoolean factory = new AtomicBoolean(false);
        system.executeTransactionally(
                "SHOW USERS YIELD user, passwordChangeRequired WHERE user = 'neo4j' RETURN passwordChangeRequired",
                Map.of(),
                result -> {
                    while (result.hasNext()) {
                        factory.set(Boolean.TRUE.equals(result.next().get("passwordChangeRequired")));
                    }
                    return null;
                });
        if (!factory.get()) {
            return false;
        }
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // The factory password is "neo4j": asking for that very value is "no change".
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (String.valueOf(t.getMessage()).contains("Old password and new password cannot be the same")) {
                    return false;
                }
            }
            throw e;
        }
        return true;
    }
}
