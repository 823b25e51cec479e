import { issueLoginCode, LOGIN_CODE_TTL_SECONDS } from '#lib/db/login-code.ts';
import { mailer } from '#lib/mail/mailer.ts';
import { serverKeys } from '#lib/server-secret.ts';

/**
 * The first step of the buyer login: a code, e-mailed (1 TransactWrite + 1 mail). Apart from
 * lib/flows/auth.ts (the steps that send nothing) because importing lib/mail bundles the SES
 * client: only the two login functions, the ones granted SES, carry it. The code's hash is keyed
 * with the server secret (read once per container, lib/server-secret.ts).
 */
export async function requestLoginCode(storeId: number, storeDomain: string, email: string) {
  const { code, expires_in } = await issueLoginCode(await serverKeys(), storeId, email);
  const minutes = LOGIN_CODE_TTL_SECONDS / 60;
  await mailer().send({
    storeDomain,
    to: email,
    subject: `Your login code for ${storeDomain}`,
    text: `Your login code for ${storeDomain} is ${code}.\nIt is valid for ${minutes} minutes and can be used once.\nIf you did not ask for it, ignore this message.`,
    code,
  });
  return { sent: true as const, expires_in };
}
