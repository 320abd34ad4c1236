package io.flowkafka.internal.skip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.message.MessageIds;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The skip_if_expression language: every operator, the type rules, and errors with their positions. */
class SkipExpressionTest {
    static final Schema USER = SchemaBuilder.record("User").namespace("skip").fields()
            .requiredString("country").optionalString("city").endRecord();
    static final Schema COLOR = SchemaBuilder.enumeration("Color").namespace("skip").symbols("RED", "GREEN");
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("skip").fields()
            .requiredString("name")
            .requiredInt("count")
            .requiredLong("total")
            .requiredFloat("ratio")
            .requiredDouble("price")
            .requiredBoolean("active")
            .name("color").type(COLOR).noDefault()
            .name("user").type().optional().type(USER)
            .name("in").type().stringType().noDefault()
            .endRecord();
    static final Schema OTHER = SchemaBuilder.record("Other").namespace("skip").fields()
            .requiredString("region").endRecord();

    static final MessageId ID = MessageIds.source(7, 42);

    /** A payload with Avro's own types: {@link Utf8} strings (as a decoded record has), boxed numbers, an enum. */
    static GenericRecord event(String name, int count, long total, float ratio, double price, boolean active,
            String color, String country) {
        GenericData.Record r = new GenericData.Record(EVENT);
        r.put("name", new Utf8(name));
        r.put("count", count);
        r.put("total", total);
        r.put("ratio", ratio);
        r.put("price", price);
        r.put("active", active);
        r.put("color", new GenericData.EnumSymbol(COLOR, color));
        if (country != null) {
            GenericData.Record u = new GenericData.Record(USER);
            u.put("country", new Utf8(country));
            r.put("user", u);
        }
        r.put("in", new Utf8("keyword"));
        return r;
    }

    static Message message(GenericRecord payload) {
        return new FlowMessage(ID, 5_000L, 9_000L, "clicks", payload, payload, List.of());
    }

    static final Message SAMPLE = message(event("alice", 3, 10_000_000_000L, 0.5f, 2.25, true, "RED", "US"));

    static boolean matches(String expression) {
        return SkipExpression.parse(expression).matches(SAMPLE);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
            // comparison operators on numbers, across int, long, float and double
            "count = 3 | true", "count == 3 | true", "count != 3 | false", "count <> 4 | true",
            "count < 4 | true", "count < 3 | false", "count <= 3 | true", "count > 2 | true", "count > 3 | false",
            "count >= 3 | true", "count = 3.0 | true", "count < 3.5 | true", "count > 2.99 | true",
            "total = 10000000000 | true", "total > count | true", "price = 2.25 | true", "price > 2 | true",
            "ratio = 0.5 | true", "ratio < price | true", "3 = count | true", "4 > count | true",
            "count = -3 | false", "-4 < count | true",
            // strings: Utf8 values against quoted literals, in code point order
            "name = 'alice' | true", "name = \"alice\" | true", "name != 'bob' | true", "name < 'bob' | true",
            "name > 'alicf' | false", "name >= 'alice' | true", "name = 'Alice' | false",
            "'alice' = name | true", "name = 'it''s' | false", "name = 'al\\ice' | true",
            // enums compare as their symbol, booleans as booleans
            "color = 'RED' | true", "color in ('GREEN', 'RED') | true", "active = true | true",
            "active != false | true", "active | true", "not active | false", "true | true", "false | false",
            // nested fields
            "user.country = 'US' | true", "user.country in ('DE', 'FR') | false", "user.city is null | true",
            "user.city is not null | false", "user is not null | true",
            // a quoted field named like a keyword
            "`in` = 'keyword' | true",
            // in, not in, mixed numbers in a list
            "count in (1, 2, 3) | true", "count in (1.5, 3.0) | true", "count in (4) | false",
            "count not in (4, 5) | true", "name in ('bob', 'alice') | true", "name not in ('alice') | false",
            // incompatible types and missing fields: every comparison is false, is null says it
            "name = 3 | false", "name != 3 | false", "count = '3' | false", "count != '3' | false",
            "active < 1 | false", "missing = 1 | false", "missing != 1 | false", "missing is null | true",
            "user.missing is null | true", "name.first is null | true", "count in (null) | false",
            "not missing = 1 | true", "not (missing != 1) | true",
            // and, or, not, parentheses; and binds tighter than or; keywords in any case
            "count = 3 and name = 'alice' | true", "count = 3 and name = 'bob' | false",
            "count = 4 or name = 'alice' | true", "count = 4 or name = 'bob' | false",
            "count = 4 and name = 'bob' or active | true", "count = 4 and (name = 'bob' or active) | false",
            "not count = 4 | true", "not (count = 3 or active) | false", "not not active | true",
            "COUNT = 3 AND Name = 'alice' | false", "count = 3 AND name = 'alice' Or false | true",
            // the $ variables
            "$stream_id = 'clicks' | true", "$stream_id in ('views') | false", "$event_timestamp = 5000 | true",
            "$event_timestamp < 5000 | false", "5000 <= $event_timestamp | true", "$system_timestamp > 8999 | true",
            "$system_timestamp >= 9000.5 | false", "$event_timestamp < $system_timestamp | true",
            "$message_id = '00000007000000000000002b' | false", "$message_id = '00000007000000000000002a' | true",
            "$message_id < '00000008' | true", "'00000007000000000000002a' = $message_id | true",
            "$message_id in ('00', '00000007000000000000002a') | true"})
    void shouldEvaluateEveryOperatorWithTheTypeRules(String expression, boolean expected) {
        assertThat(matches(expression)).as(expression).isEqualTo(expected);
    }

    @Test
    void shouldCompareJavaStringsAndUtf8AlikeInCodePointOrder() {
        GenericData.Record r = (GenericData.Record) event("x", 0, 0, 0, 0, false, "RED", null);
        r.put("name", "\uD83D\uDE00"); // a Java String above U+FFFF: after U+FFFD in code point order
        Message m = message(r);
        assertThat(SkipExpression.parse("name > '\uFFFD'").matches(m)).isTrue();
        r.put("name", new Utf8("\uD83D\uDE00"));
        assertThat(SkipExpression.parse("name > '\uFFFD'").matches(m)).isTrue();
        assertThat(SkipExpression.parse("name = '\uD83D\uDE00'").matches(m)).isTrue();
    }

    @Test
    void shouldCompareALongAndADoubleExactlyBeyondDoublePrecision() {
        GenericData.Record r = (GenericData.Record) event("x", 0, (1L << 53) + 1, 0, (double) (1L << 53), false,
                "RED", null);
        Message m = message(r);
        assertThat(SkipExpression.parse("total > price").matches(m)).as("2^53+1 > 2^53 as double").isTrue();
        assertThat(SkipExpression.parse("total = price").matches(m)).isFalse();
        assertThat(SkipExpression.parse("price < total").matches(m)).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
            "count = | 8 | expected a value after '=' but found end",
            "count = 3 and | 14 | expected a condition but found end",
            "(count = 3 | 11 | expected ')' to close the '(' at 1 but found end",
            "count = 3) | 10 | expected 'and', 'or' or the end of the expression but found ')'",
            "count 3 | 7 | expected 'and', 'or' or the end of the expression but found '3'",
            "$offset > 1 | 1 | unknown variable '$offset'; the variables are $message_id",
            "count # 3 | 7 | unexpected character '#'",
            "name = 'alice | 8 | the string starting here is not closed",
            "count = null | 9 | a comparison with null is never true; write 'is null'",
            "5 | 2 | expected a comparison (=, !=, <, <=, >, >=, in, is null) after '5' but found end",
            "count not 3 | 11 | expected 'in' after 'not' but found '3'",
            "count is 3 | 10 | expected 'null' or 'not null' after 'is' but found '3'",
            "count in 3 | 10 | expected '(' after 'in' but found '3'",
            "count in (1 2) | 13 | expected ',' or ')' in the list of 'in' but found '2'",
            "in = 1 | 1 | expected a condition (a field named like a keyword goes in backticks: `in`) but found 'in'",
            "user. = 1 | 7 | expected a field name after '.' but found '='",
            "count ! 3 | 7 | expected '!=' but found '!'",
            "$message_id = 'xyz' | 15 | expected a message id in hexadecimal",
            "count = 99999999999999999999 | 9 | the integer 99999999999999999999 is out of the 64-bit range",
            "count = 3x | 9 | expected a number but found '3x'",
            "'' | 3 | expected a comparison"})
    void shouldNameThePositionAndWhatWasExpected(String expression, int position, String detail) {
        assertThatThrownBy(() -> SkipExpression.parse(expression))
                .isInstanceOfSatisfying(SkipExpressionException.class, e -> {
                    assertThat(e.position()).isEqualTo(position);
                    assertThat(e.getMessage()).startsWith("skip_if_expression at " + position + ": ")
                            .contains(detail);
                });
    }

    @Test
    void shouldRejectAnUnknownPayloadFieldListingTheFieldsThatExist() {
        SkipExpression e = SkipExpression.parse("count = 1 or user.contry = 'US'");
        assertThatThrownBy(() -> e.checkFields(List.of(EVENT, OTHER)))
                .isInstanceOfSatisfying(SkipExpressionException.class, x -> {
                    assertThat(x.position()).isEqualTo(14);
                    assertThat(x.getMessage()).contains("unknown payload field 'user.contry'",
                            "the input payloads have: active, color, count, in, name, price, ratio, region, total, "
                                    + "user, user.city, user.country");
                });
        SkipExpression.parse("region = 'eu' and user.country = 'US' and `in` is null").checkFields(List.of(EVENT,
                OTHER)); // each field exists in one of the inputs
        assertThatThrownBy(() -> SkipExpression.parse("name.first = 'a'").checkFields(List.of(EVENT)))
                .hasMessageContaining("unknown payload field 'name.first'");
    }

    @Test
    void shouldNotAllocatePerEvaluation() {
        SkipExpression e = SkipExpression.parse("(count >= 1 and name in ('bob', 'alice') and user.country != 'DE')"
                + " or $event_timestamp > 100 and not active and price < 3.5 and $stream_id = 'clicks'"
                + " and color = 'RED' and user.city is null");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
                "this JVM measures no per-thread allocation");
        long thread = Thread.currentThread().getId();
        boolean any = false;
        for (int i = 0; i < 20_000; i++) {
            any |= e.matches(SAMPLE); // warm up
        }
        long before = threads.getThreadAllocatedBytes(thread);
        for (int i = 0; i < 100_000; i++) {
            any |= e.matches(SAMPLE);
        }
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertThat(any).isTrue();
        assertThat(allocated).as("bytes allocated by 100,000 evaluations").isLessThan(10_000);
    }
}
