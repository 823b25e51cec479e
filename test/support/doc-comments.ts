import ts from 'typescript';

/**
 * A doc comment (`/** ... *\/`) belongs to the declaration right under it: that is where editors
 * show it and where a reader looks for it. Two in a row (stacked) leave the first describing
 * nothing, usually an older text left above its replacement or a module's header glued to the
 * first declaration's own; one followed by an import, a plain comment, a closing brace or the end
 * of the file (orphaned) documents nothing at all. A module's header is a plain block comment
 * (`/* ... *\/`) or the doc comment of its first declaration.
 */
export interface DocCommentViolation {
  file: string;
  line: number;
  kind: 'stacked' | 'orphaned';
  /** What follows the doc comment. */
  followedBy: string;
}

/** Line comments that must sit between a doc comment and its declaration (tool directives), so they do not orphan it. */
const DIRECTIVE = /^\/\/\s*(biome-ignore|@ts-expect-error|@ts-ignore)/;

const isDocComment = (text: string) => text.startsWith('/**') && text !== '/**/' && !text.startsWith('/***');

/** The source's tokens, in order, each with the comments written before it. */
function tokensWithComments(source: ts.SourceFile): { token: ts.Node; comments: ts.CommentRange[] }[] {
  const found: { token: ts.Node; comments: ts.CommentRange[] }[] = [];
  const visit = (node: ts.Node) => {
    const children = node.getChildren(source).filter((child) => child.kind < ts.SyntaxKind.FirstJSDocNode || child.kind > ts.SyntaxKind.LastJSDocNode);
    if (children.length === 0) found.push({ token: node, comments: ts.getLeadingCommentRanges(source.text, node.pos) ?? [] });
    else children.forEach(visit);
  };
  visit(source);
  return found;
}

/** Every stacked or orphaned doc comment of one TypeScript source. */
export function docCommentViolations(file: string, text: string): DocCommentViolation[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const violations: DocCommentViolation[] = [];
  for (const { token, comments } of tokensWithComments(source)) {
    comments.forEach((comment, index) => {
      const commentText = text.slice(comment.pos, comment.end);
      if (!isDocComment(commentText)) return;
      let next = index + 1;
      while (next < comments.length && DIRECTIVE.test(text.slice(comments[next]!.pos, comments[next]!.end))) next += 1;
      const report = (kind: DocCommentViolation['kind'], followedBy: string) =>
        violations.push({ file, line: source.getLineAndCharacterOfPosition(comment.pos).line + 1, kind, followedBy });
      if (next < comments.length) {
        if (isDocComment(text.slice(comments[next]!.pos, comments[next]!.end))) report('stacked', 'another doc comment');
        else report('orphaned', 'a plain comment');
      } else if (token.kind === ts.SyntaxKind.ImportKeyword && token.parent && ts.isImportDeclaration(token.parent)) report('orphaned', 'an import');
      else if (token.kind === ts.SyntaxKind.CloseBraceToken) report('orphaned', 'a closing brace');
      else if (token.kind === ts.SyntaxKind.EndOfFileToken) report('orphaned', 'the end of the file');
    });
  }
  return violations;
}
