"""Benchmark problems written for this project (no dataset is downloaded).

``ASSERT_PROBLEMS`` are HumanEval-like: a documented function (the canonical
solution) and a ``check(candidate)`` block of assertions, scored as one
assert test (``check(<entry point>)``), the way HumanEval is scored.
``STDIN_PROBLEMS`` are small stdin/stdout problems with a solution in every
language the sandbox runs, 10 tests each (three written out, seven made by
``_more_tests``). ``CALL_PROBLEMS`` are the HumanEval-like problems whose
``check`` blocks are plain ``assert candidate(...) == value`` lines, turned
into call-based tests in the APPS/TACO form (``fn_name``, JSON-lines inputs,
JSON outputs) that verl's ``prime_code`` and ``code_exec`` both take.
"""

from __future__ import annotations

import ast
import json
from typing import Any, NamedTuple


class AssertProblem(NamedTuple):
    entry_point: str
    solution: str
    check: str


def _problem(entry_point: str, solution: str, check: str) -> AssertProblem:
    return AssertProblem(entry_point, solution.strip() + "\n", check.strip() + "\n")


ASSERT_PROBLEMS = [
    _problem("running_max", '''
def running_max(numbers: list) -> list:
    """The largest value seen so far, at each position.
    >>> running_max([1, 3, 2, 5])
    [1, 3, 3, 5]
    """
    result, best = [], None
    for n in numbers:
        best = n if best is None or n > best else best
        result.append(best)
    return result
''', '''
def check(candidate):
    assert candidate([]) == []
    assert candidate([1, 3, 2, 5]) == [1, 3, 3, 5]
    assert candidate([5, 4, 3]) == [5, 5, 5]
    assert candidate([-2, -1, -3]) == [-2, -1, -1]
'''),
    _problem("count_vowels", '''
def count_vowels(text: str) -> int:
    """How many of the letters are vowels (a, e, i, o, u), in either case."""
    return sum(1 for c in text.lower() if c in "aeiou")
''', '''
def check(candidate):
    assert candidate("") == 0
    assert candidate("Sandbox") == 2
    assert candidate("AEIOU xyz") == 5
    assert candidate("rhythm") == 0
'''),
    _problem("balanced", '''
def balanced(text: str) -> bool:
    """Whether every bracket ((), [], {}) in text is closed in order."""
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for c in text:
        if c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack
''', '''
def check(candidate):
    assert candidate("")
    assert candidate("([]{})")
    assert not candidate("(]")
    assert not candidate("((")
    assert candidate("a(b[c]d)e")
'''),
    _problem("rotate", '''
def rotate(items: list, k: int) -> list:
    """items rotated left by k places (k may exceed the length or be negative)."""
    if not items:
        return []
    k %= len(items)
    return items[k:] + items[:k]
''', '''
def check(candidate):
    assert candidate([1, 2, 3, 4], 1) == [2, 3, 4, 1]
    assert candidate([1, 2, 3], 5) == [3, 1, 2]
    assert candidate([1, 2, 3], -1) == [3, 1, 2]
    assert candidate([], 3) == []
'''),
    _problem("digit_sum", '''
def digit_sum(n: int) -> int:
    """The sum of the decimal digits of n (its sign ignored)."""
    return sum(int(d) for d in str(abs(n)))
''', '''
def check(candidate):
    assert candidate(0) == 0
    assert candidate(1234) == 10
    assert candidate(-905) == 14
    assert candidate(10**20) == 1
'''),
    _problem("merge_sorted", '''
def merge_sorted(a: list, b: list) -> list:
    """The sorted merge of two sorted lists."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i]); i += 1
        else:
            out.append(b[j]); j += 1
    return out + a[i:] + b[j:]
''', '''
def check(candidate):
    assert candidate([1, 4, 9], [2, 3, 10]) == [1, 2, 3, 4, 9, 10]
    assert candidate([], [1]) == [1]
    assert candidate([1, 1], [1]) == [1, 1, 1]
    assert candidate([], []) == []
'''),
    _problem("second_largest", '''
def second_largest(numbers: list):
    """The second largest distinct value, or None when there is none."""
    distinct = sorted(set(numbers), reverse=True)
    return distinct[1] if len(distinct) > 1 else None
''', '''
def check(candidate):
    assert candidate([3, 1, 4, 1, 5]) == 4
    assert candidate([2, 2]) is None
    assert candidate([]) is None
    assert candidate([-1, -5, -3]) == -3
'''),
    _problem("run_length", '''
def run_length(text: str) -> str:
    """Each run of a repeated character as the character and the run's length."""
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{text[i]}{j - i}")
        i = j
    return "".join(out)
''', '''
def check(candidate):
    assert candidate("") == ""
    assert candidate("aaabcc") == "a3b1c2"
    assert candidate("abc") == "a1b1c1"
    assert candidate("zzzzzzzzzzzz") == "z12"
'''),
    _problem("anagrams", '''
def anagrams(a: str, b: str) -> bool:
    """Whether a and b use the same letters, ignoring case and spaces."""
    def key(s):
        return sorted(s.replace(" ", "").lower())
    return key(a) == key(b)
''', '''
def check(candidate):
    assert candidate("Listen", "Silent")
    assert candidate("a gentleman", "elegant man")
    assert not candidate("abc", "abd")
    assert candidate("", "  ")
'''),
    _problem("multiples_below", '''
def multiples_below(n: int) -> int:
    """How many positive integers below n are multiples of 3 or 5."""
    return sum(1 for k in range(1, n) if k % 3 == 0 or k % 5 == 0)
''', '''
def check(candidate):
    assert candidate(1) == 0
    assert candidate(10) == 4
    assert candidate(16) == 7
    assert candidate(1000) == 466
'''),
    _problem("flatten_once", '''
def flatten_once(nested: list) -> list:
    """One level of nesting removed: lists are spliced in, other items kept."""
    out = []
    for item in nested:
        out.extend(item if isinstance(item, list) else [item])
    return out
''', '''
def check(candidate):
    assert candidate([1, [2, 3], [], 4]) == [1, 2, 3, 4]
    assert candidate([[1, [2]], 3]) == [1, [2], 3]
    assert candidate([]) == []
'''),
    _problem("gcd_all", '''
def gcd_all(numbers: list) -> int:
    """The greatest common divisor of all the numbers (0 for none)."""
    from math import gcd
    result = 0
    for n in numbers:
        result = gcd(result, n)
    return result
''', '''
def check(candidate):
    assert candidate([12, 18, 30]) == 6
    assert candidate([7]) == 7
    assert candidate([]) == 0
    assert candidate([0, 5]) == 5
'''),
    _problem("binary", '''
def binary(n: int) -> str:
    """n in base 2, with a minus sign when negative."""
    if n < 0:
        return "-" + binary(-n)
    digits = ""
    while True:
        digits = str(n % 2) + digits
        n //= 2
        if n == 0:
            return digits
''', '''
def check(candidate):
    assert candidate(0) == "0"
    assert candidate(5) == "101"
    assert candidate(-6) == "-110"
    assert candidate(1024) == "10000000000"
'''),
    _problem("word_lengths", '''
def word_lengths(sentence: str) -> dict:
    """Each distinct word and its length."""
    return {word: len(word) for word in sentence.split()}
''', '''
def check(candidate):
    assert candidate("") == {}
    assert candidate("to be or not") == {"to": 2, "be": 2, "or": 2, "not": 3}
    assert candidate("a a a") == {"a": 1}
'''),
    _problem("common_prefix", '''
def common_prefix(words: list) -> str:
    """The longest prefix all the words share."""
    if not words:
        return ""
    prefix = words[0]
    for word in words[1:]:
        while not word.startswith(prefix):
            prefix = prefix[:-1]
    return prefix
''', '''
def check(candidate):
    assert candidate(["flower", "flow", "flight"]) == "fl"
    assert candidate(["same", "same"]) == "same"
    assert candidate(["a", "b"]) == ""
    assert candidate([]) == ""
'''),
    _problem("pascal_row", '''
def pascal_row(n: int) -> list:
    """Row n (from 0) of Pascal's triangle."""
    row = [1]
    for _ in range(n):
        row = [a + b for a, b in zip([0] + row, row + [0])]
    return row
''', '''
def check(candidate):
    assert candidate(0) == [1]
    assert candidate(4) == [1, 4, 6, 4, 1]
    assert sum(candidate(10)) == 1024
'''),
    _problem("is_prime", '''
def is_prime(n: int) -> bool:
    """Whether n is a prime number."""
    if n < 2:
        return False
    k = 2
    while k * k <= n:
        if n % k == 0:
            return False
        k += 1
    return True
''', '''
def check(candidate):
    assert not candidate(1)
    assert candidate(2)
    assert candidate(97)
    assert not candidate(91)
    assert candidate(7919)
'''),
    _problem("shift_letters", '''
def shift_letters(text: str, shift: int) -> str:
    """Letters moved shift places along the alphabet (wrapping, case kept); the rest unchanged."""
    out = []
    for c in text:
        if c.isalpha() and c.isascii():
            base = ord("a") if c.islower() else ord("A")
            out.append(chr(base + (ord(c) - base + shift) % 26))
        else:
            out.append(c)
    return "".join(out)
''', '''
def check(candidate):
    assert candidate("abc", 1) == "bcd"
    assert candidate("XYZ", 3) == "ABC"
    assert candidate("Hello, World!", 13) == "Uryyb, Jbeyq!"
    assert candidate("abc", -1) == "zab"
'''),
    _problem("transpose", '''
def transpose(matrix: list) -> list:
    """The transpose of a rectangular matrix given as a list of rows."""
    return [list(column) for column in zip(*matrix)]
''', '''
def check(candidate):
    assert candidate([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]
    assert candidate([[1]]) == [[1]]
    assert candidate([]) == []
'''),
    _problem("dedupe_runs", '''
def dedupe_runs(items: list) -> list:
    """items without consecutive repeats."""
    out = []
    for item in items:
        if not out or out[-1] != item:
            out.append(item)
    return out
''', '''
def check(candidate):
    assert candidate([1, 1, 2, 2, 2, 1]) == [1, 2, 1]
    assert candidate(list("aabbcca")) == ["a", "b", "c", "a"]
    assert candidate([]) == []
'''),
    _problem("odd_squares", '''
def odd_squares(numbers: list) -> int:
    """The sum of the squares of the odd numbers."""
    return sum(n * n for n in numbers if n % 2)
''', '''
def check(candidate):
    assert candidate([1, 2, 3]) == 10
    assert candidate([]) == 0
    assert candidate([-3, 4]) == 9
'''),
    _problem("median", '''
def median(numbers: list) -> float:
    """The median of a non-empty list of numbers."""
    ordered = sorted(numbers)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
''', '''
def check(candidate):
    assert candidate([3, 1, 2]) == 2
    assert candidate([4, 1, 3, 2]) == 2.5
    assert candidate([7]) == 7
    assert abs(candidate([1, 2]) - 1.5) < 1e-9
'''),
    _problem("roman", '''
def roman(text: str) -> int:
    """The value of a Roman numeral."""
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, c in enumerate(text):
        v = values[c]
        total += -v if i + 1 < len(text) and values[text[i + 1]] > v else v
    return total
''', '''
def check(candidate):
    assert candidate("III") == 3
    assert candidate("IV") == 4
    assert candidate("MCMXCIV") == 1994
    assert candidate("LVIII") == 58
'''),
    _problem("words_title", '''
def words_title(text: str) -> str:
    """Every word capitalised: its first letter upper case, the rest lower case."""
    return " ".join(w[:1].upper() + w[1:].lower() for w in text.split(" "))
''', '''
def check(candidate):
    assert candidate("hello world") == "Hello World"
    assert candidate("sANDBOX tEST") == "Sandbox Test"
    assert candidate("") == ""
'''),
]


class StdinProblem(NamedTuple):
    name: str
    inputs: list[str]
    outputs: list[str]
    solutions: dict[str, str]


class CallProblem(NamedTuple):
    entry_point: str
    solution: str
    tests: dict[str, Any]


def _more_tests(name: str, inputs: list[str], outputs: list[str]) -> StdinProblem:
    """Seven more tests of the problem ``name``, computed here (the same answers as the solutions give)."""
    extra: list[tuple[str, str]] = []
    for i in range(7):
        if name == "sum":
            numbers = [(i * 37 + j * 11) % 1000 - 500 for j in range(5 + 3 * i)]
            extra.append((f"{len(numbers)}\n{' '.join(map(str, numbers))}\n", f"{sum(numbers)}\n"))
        elif name == "reverse_words":
            words = [f"w{i}{j}" for j in range(1 + 2 * i)]
            extra.append((" ".join(words) + "\n", " ".join(reversed(words)) + "\n"))
        else:
            n = 20 + 5000 * i
            sieve = bytearray([1]) * (n + 1)
            sieve[:2] = b"\x00\x00"
            for k in range(2, int(n**0.5) + 1):
                if sieve[k]:
                    sieve[k * k :: k] = bytearray(len(range(k * k, n + 1, k)))
            extra.append((f"{n}\n", f"{sum(sieve)}\n"))
    return StdinProblem(name, inputs + [e[0] for e in extra], outputs + [e[1] for e in extra], {})


STDIN_PROBLEMS = [
    StdinProblem(
        "sum",
        ["3\n1 2 3\n", "1\n-7\n", "5\n10 20 30 40 50\n"],
        ["6\n", "-7\n", "150\n"],
        {
            "python": "input()\nprint(sum(map(int, input().split())))\n",
            "cpp": "#include <iostream>\nint main(){long long n,s=0,x;std::cin>>n;while(n--&&std::cin>>x)s+=x;"
                   "std::cout<<s<<\"\\n\";}\n",
            "rust": "use std::io::Read;\nfn main(){let mut s=String::new();std::io::stdin().read_to_string(&mut s)"
                    ".unwrap();let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
                    "println!(\"{}\",v[1..].iter().sum::<i64>());}\n",
            "java": "import java.util.*;\npublic class Main{public static void main(String[] a){Scanner s=new "
                    "Scanner(System.in);int n=s.nextInt();long t=0;for(int i=0;i<n;i++)t+=s.nextLong();"
                    "System.out.println(t);}}\n",
            "javascript": "const v=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);"
                          "console.log(v.slice(1).reduce((a,b)=>a+b,0));\n",
            "c": "#include <stdio.h>\nint main(void){long long n,s=0,x;if(scanf(\"%lld\",&n)!=1)return 1;"
                 "while(n--&&scanf(\"%lld\",&x)==1)s+=x;printf(\"%lld\\n\",s);return 0;}\n",
        },
    ),
    StdinProblem(
        "reverse_words",
        ["the quick brown fox\n", "single\n", "a b c d e\n"],
        ["fox brown quick the\n", "single\n", "e d c b a\n"],
        {
            "python": "print(' '.join(reversed(input().split())))\n",
            "cpp": "#include <iostream>\n#include <string>\n#include <vector>\nint main(){std::vector<std::string> w;"
                   "std::string x;while(std::cin>>x)w.push_back(x);for(size_t i=w.size();i-->0;)"
                   "std::cout<<w[i]<<(i?\" \":\"\\n\");}\n",
            "rust": "use std::io::Read;\nfn main(){let mut s=String::new();std::io::stdin().read_to_string(&mut s)"
                    ".unwrap();let w:Vec<&str>=s.split_whitespace().rev().collect();println!(\"{}\",w.join(\" \"));}\n",
            "java": "import java.io.*;import java.util.*;\npublic class Main{public static void main(String[] a) "
                    "throws IOException{List<String> w=Arrays.asList(new BufferedReader(new InputStreamReader("
                    "System.in)).readLine().trim().split(\"\\\\s+\"));Collections.reverse(w);"
                    "System.out.println(String.join(\" \",w));}}\n",
            "javascript": "const w=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/);"
                          "console.log(w.reverse().join(' '));\n",
            "c": "#include <stdio.h>\n#include <string.h>\nint main(void){static char w[1000][64];int n=0;"
                 "while(n<1000&&scanf(\"%63s\",w[n])==1)n++;for(int i=n-1;i>=0;i--)"
                 "printf(\"%s%s\",w[i],i?\" \":\"\\n\");return 0;}\n",
        },
    ),
    StdinProblem(
        "count_primes",
        ["10\n", "1000\n", "100000\n"],
        ["4\n", "168\n", "9592\n"],
        {
            "python": "n = int(input())\nsieve = bytearray([1]) * (n + 1)\nsieve[:2] = b'\\x00\\x00'\n"
                      "for i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n"
                      "        sieve[i * i :: i] = bytearray(len(range(i * i, n + 1, i)))\nprint(sum(sieve))\n",
            "cpp": "#include <iostream>\n#include <vector>\nint main(){int n;std::cin>>n;std::vector<char> s(n+1,1);"
                   "int c=0;for(int i=2;i<=n;i++)if(s[i]){c++;for(long long j=1LL*i*i;j<=n;j+=i)s[j]=0;}"
                   "std::cout<<c<<\"\\n\";}\n",
            "rust": "fn main(){let mut s=String::new();std::io::stdin().read_line(&mut s).unwrap();let n:usize="
                    "s.trim().parse().unwrap();let mut p=vec![true;n+1];let mut c=0;for i in 2..=n{if p[i]{c+=1;"
                    "let mut j=i*i;while j<=n{p[j]=false;j+=i;}}}println!(\"{}\",c);}\n",
            "java": "import java.util.*;\npublic class Main{public static void main(String[] a){int n=new "
                    "Scanner(System.in).nextInt();boolean[] c=new boolean[n+1];int k=0;for(int i=2;i<=n;i++)"
                    "if(!c[i]){k++;for(long j=(long)i*i;j<=n;j+=i)c[(int)j]=true;}System.out.println(k);}}\n",
            "javascript": "const n=Number(require('fs').readFileSync(0,'utf8'));const c=new Uint8Array(n+1);let k=0;"
                          "for(let i=2;i<=n;i++)if(!c[i]){k++;for(let j=i*i;j<=n;j+=i)c[j]=1;}console.log(k);\n",
            "c": "#include <stdio.h>\n#include <stdlib.h>\nint main(void){int n,k=0;if(scanf(\"%d\",&n)!=1)return 1;"
                 "char*c=calloc(n+1,1);for(int i=2;i<=n;i++)if(!c[i]){k++;for(long long j=(long long)i*i;j<=n;j+=i)"
                 "c[j]=1;}printf(\"%d\\n\",k);return 0;}\n",
        },
    ),
]

STDIN_PROBLEMS = [
    problem._replace(inputs=more.inputs, outputs=more.outputs)
    for problem in STDIN_PROBLEMS
    for more in [_more_tests(problem.name, problem.inputs, problem.outputs)]
]


def _call_tests(check: str) -> list[tuple[list[Any], Any]] | None:
    """``(arguments, expected value)`` of each ``assert candidate(...) == value`` (or
    ``assert [not] candidate(...)``) line of ``check``; None when a line is anything else."""
    found = []
    for node in ast.walk(ast.parse(check)):
        if not isinstance(node, ast.Assert):
            continue
        test, expected = node.test, True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, expected = test.operand, False
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            test, expected = test.left, _literal(test.comparators[0])
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "candidate"):
            return None
        arguments = [_literal(argument) for argument in test.args]
        if expected is _NOT_LITERAL or _NOT_LITERAL in arguments:
            return None
        found.append((arguments, expected))
    return found


_NOT_LITERAL = object()


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL


CALL_PROBLEMS = [
    CallProblem(p.entry_point, p.solution, {
        "fn_name": p.entry_point,
        "inputs": ["\n".join(json.dumps(a) for a in arguments) for arguments, _ in tests],
        "outputs": [json.dumps(expected) for _, expected in tests],
    })
    for p in ASSERT_PROBLEMS
    if (tests := _call_tests(p.check))
]
