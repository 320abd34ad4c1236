package io.flowkafka.cli;

import picocli.CommandLine.Option;

/**
 * The pipeline's name alone, for the commands that talk to an instance's HTTP server and not to Kafka
 * ({@code read-states}, {@code delete-states}): they check the instance runs this pipeline.
 */
final class PipelineOption {
    @Option(names = {"-p", "--pipeline"}, required = true, paramLabel = "NAME",
            description = "the pipeline's name (the spec's \"name\"); the instance must run it")
    String pipeline;
}
