package io.flowkafka.spec;

/**
 * Names shared by external state managers, joiners and state joiners: the default topic of a table,
 * and the short form of a Flow class name.
 */
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

    /**
     * The short form of a manager or joiner class name: Flow's namespaced name without its namespace, e.g.
     * {@code NYT::NFlow::TSimpleExternalStateManager} is {@code TSimpleExternalStateManager}, as
     * {@code external_state_manager_class_name} and {@code external_state_joiner_class_name} accept both.
     *
     * @param className a class name as written in a spec
     * @return the part after the last {@code ::}, trimmed; {@code className} trimmed if it has none
     */
    public static String shortClassName(String className) {
        String trimmed = className.trim();
        int at = trimmed.lastIndexOf("::");
        return at < 0 ? trimmed : trimmed.substring(at + 2);
    }
}
