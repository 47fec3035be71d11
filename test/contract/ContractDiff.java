/*
 * Compares two OpenAPI documents with openapi-diff (org.openapitools.openapidiff, from Maven
 * Central): prints the changes as Markdown and exits 1 when the new document breaks clients of
 * the old one, 0 otherwise. Run by test/contract/api-contract.test.ts:
 *   java -cp <openapi-diff-core and its dependencies> ContractDiff.java old.json new.json
 */
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import org.openapitools.openapidiff.core.OpenApiCompare;
import org.openapitools.openapidiff.core.model.ChangedOpenApi;
import org.openapitools.openapidiff.core.output.MarkdownRender;

public class ContractDiff {
  public static void main(String[] args) throws Exception {
    ChangedOpenApi diff = OpenApiCompare.fromLocations(args[0], args[1]);
    boolean breaking = diff.isIncompatible();
    // The renderer closes the stream it writes: nothing is printed after it.
    new MarkdownRender().render(diff, new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    System.exit(breaking ? 1 : 0);
  }
}
