package org.argweb.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Runs Neo4j Community embedded with only a Bolt connector on localhost.
 *
 * <p>Arguments: {@code --home DIR --port PORT --password PW [--pagecache BYTES]}. The process
 * keeps running until it receives SIGTERM/SIGINT, then shuts the DBMS down cleanly. Clients talk to
 * it exclusively over Bolt, exactly as they would to a standalone server or a cluster.
 */
public final class EmbeddedNeo4j {
    private EmbeddedNeo4j() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 7687;
        String password = null;
        long pagecache = ByteUnit.mebiBytes(512);
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--password" -> password = args[++i];
                case "--pagecache" -> pagecache = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        if (home == null || password == null) {
            throw new IllegalArgumentException("--home and --password are required");
        }
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pagecache)
                .build();

        try {
            setPassword(dbms, password);
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
     * The built-in user starts with a must-change password; set ours without forcing a change so
     * that drivers can log in directly. Running against "system" from inside the JVM is trusted.
     */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // Neo4j refuses to "change" a password to its current value, which is what every restart
            // of an existing data directory with the same password asks for: nothing to do then.
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (String.valueOf(t.getMessage()).contains("Old password and new password cannot be the same")) {
                    return;
                }
            }
            throw e;
        }
    }
}
