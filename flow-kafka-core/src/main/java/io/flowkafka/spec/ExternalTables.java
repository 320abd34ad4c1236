package io.flowkafka.spec;

/** Names shared by external state managers, joiners and state joiners: the default topic of a table. */
public final class ExternalTables {
    private ExternalTables() {
    }

    /**
     * The default topic of the external table {@code name} of pipeline {@code pipelineName}.
     *
     * @param pipelineName the pipeline's name
     * @param name a manager or joiner name, e.g. {@code /reference_state}
     * @return {@code <pipeline>.external.<name without its leading />}, e.g. {@code shop.external.reference_state}
     */
    public static String defaultTopic(String pipelineName, String name) {
        String bare = name.startsWith("/") ? name.substring(1) : name;
        return pipelineName + ".external." + bare.replace('/', '.');
    }
}
