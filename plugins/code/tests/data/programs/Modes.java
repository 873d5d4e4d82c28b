// The first word of stdin chooses what this program does (sandbox fault tests);
// without a mode word it prints the sum of the integers on stdin.
import java.io.IOException;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class Modes {
    public static void main(String[] args) throws Exception {
        String[] words = new String(System.in.readAllBytes()).trim().split("\\s+");
        switch (words[0]) {
            case "loop": {
                long n = 0;
                while (true) n++;
            }
            case "fork": {
                List<Process> children = new ArrayList<>();
                while (true) {
                    try {
                        children.add(new ProcessBuilder("sleep", "30").start());
                    } catch (IOException e) {
                        // at the process limit: try again
                    }
                }
            }
            case "hog": {
                List<long[]> held = new ArrayList<>();
                while (true) held.add(new long[2 << 20]);
            }
            case "flood": {
                PrintStream out = System.out;
                String line = "x".repeat(1000);
                while (!out.checkError()) out.println(line);
                return;
            }
            case "escape": {
                try {
                    Files.readAllBytes(Path.of(words[1]));
                    System.out.println("read");
                } catch (IOException e) {
                    System.out.println("denied");
                }
                try {
                    Files.writeString(Path.of("/escape"), "x");
                    System.out.println("wrote");
                } catch (IOException e) {
                    System.out.println("refused");
                }
                try (Socket socket = new Socket("127.0.0.1", Integer.parseInt(words[2]))) {
                    System.out.println("connected");
                } catch (IOException e) {
                    System.out.println("unreachable");
                }
                return;
            }
            default: {
                long sum = 0;
                for (String word : words) if (!word.isEmpty()) sum += Long.parseLong(word);
                System.out.println(sum);
            }
        }
    }
}
